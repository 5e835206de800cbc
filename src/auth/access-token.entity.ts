import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../storage/schema/numeric.transformer';
import { asScopeList, TokenScope } from './token-scopes';

/** An API token as stored: its SHA-256 hash and a short display prefix, never its value. */
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

  @Column({
    name: 'revoked_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  revokedAt!: number | null;
}
