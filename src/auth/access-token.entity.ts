import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../storage/schema/numeric.transformer';
import { asScopeList, TokenScope } from './token-scopes';

/**
 * An API token as stored: its SHA-256 hash and a short display prefix, never its value. A token
 * belongs to one space (`spaceId`) or to the whole deployment (null).
 */
@Entity({ name: 'access_tokens' })
export class AccessTokenEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  @Index('ux_access_tokens_hash', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  /** What the token may be used for: stored comma-separated and sorted (`ingest,query`). */
  @Column({ type: 'varchar', length: 64, default: 'query', transformer: asScopeList })
  scopes!: TokenScope[];

  /** The space the token belongs to; null for a deployment token, which reaches every space. */
  @Index('ix_access_tokens_space')
  @Column({ name: 'space_id', type: 'integer', nullable: true, default: null })
  spaceId!: number | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;

  @Column({
    name: 'last_used_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  lastUsedAt!: number | null;

  /** The client address of the last use (IPv6 at most 45 characters). */
  @Column({ name: 'last_used_from', type: 'varchar', length: 45, nullable: true, default: null })
  lastUsedFrom!: string | null;

  /** Epoch ms from which the token is refused; null: never. A rotated-out token's grace end. */
  @Column({
    name: 'expires_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  expiresAt!: number | null;

  /**
   * Who created it, as the host names its users (the dashboard: the account's id; the command
   * line: `cli`); null when not told, and for tokens made before creators were recorded.
   */
  @Column({ name: 'created_by', type: 'varchar', length: 64, nullable: true, default: null })
  createdBy!: string | null;

  /** The token a rotation replaced this one with. */
  @Column({ name: 'replaced_by', type: 'varchar', length: 36, nullable: true, default: null })
  replacedBy!: string | null;

  @Column({
    name: 'revoked_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  revokedAt!: number | null;
}
