import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { EntityManager, FindOptionsWhere, In, IsNull, MoreThan, Repository } from 'typeorm';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { SingleFlight } from '../common/single-flight';
import { parseDisplayName } from '../common/text/display-name';
import { dialectOf } from '../storage/engines';
import { TransactionRunner } from '../storage/transactions/transaction-runner';
import { AccessTokenEntity } from './access-token.entity';
import { displayPrefixOf, generateToken, hashToken, isWellFormedToken } from './token-format';
import { latestTokenExpiry, MAX_ROTATION_GRACE_MS } from './token-expiry';
import {
  DEFAULT_TOKEN_SCOPES,
  hasScope,
  insufficientScope,
  parseTokenScopes,
  TokenScope,
} from './token-scopes';
import { query } from '../storage/statements';

/** A token as it may be shown: never its value or hash. */
export interface AccessTokenInfo {
  id: string;
  name: string;
  prefix: string;
  /** What it may be used for, sorted: `query` (POST /query), `ingest` (POST /ingest). */
  scopes: TokenScope[];
  /** The space it belongs to, or null for a deployment token (every space). */
  spaceId: number | null;
  createdAt: string;
  /** From then on it is refused; null: never. */
  expiresAt: string | null;
  lastUsedAt: string | null;
  /** The client address of its last use. */
  lastUsedFrom: string | null;
  /** Who created it (see {@link CreateTokenOptions.createdBy}); null when not told. */
  createdBy: string | null;
}

/** What else {@link AccessTokensService.create} may be told. */
export interface CreateTokenOptions {
  /** The space the token belongs to (it must exist: the caller checks); null: a deployment token. */
  spaceId?: number | null;
  /** Epoch ms from which it is refused (see parseTokenExpiry); null or absent: never. */
  expiresAt?: number | null;
  /**
   * Who creates it, as the host names its users (at most 64 characters): the dashboard records
   * the account's id, the command line `cli`. Lists show it, and {@link revokeCreatedBy} revokes
   * by it when a member leaves.
   */
  createdBy?: string | null;
  /**
   * Refuse (ALREADY_EXISTS) a name that a live token of the same owner (the same space, or the
   * deployment) already has, compared case-insensitively: two live "ci" tokens cannot be told
   * apart in a list, nor revoked by name with confidence. Off for hosts that name tokens freely.
   */
  uniqueName?: boolean;
}

/** Which tokens {@link AccessTokensService.list} answers. */
export interface TokenListFilter {
  /** The tokens of these spaces. */
  spaceIds?: readonly number[];
  /** Deployment tokens too. */
  deployment?: boolean;
}

/** A rotation's result: the new token (its value shown this once) and the old one as it is now. */
export interface RotatedAccessToken {
  token: CreatedAccessToken;
  previous: AccessTokenInfo;
}

/** Returned once, at creation: the only time the value exists outside its holder. */
export interface CreatedAccessToken extends AccessTokenInfo {
  token: string;
}

export interface AuthenticatedToken {
  id: string;
  name: string;
  scopes: TokenScope[];
  /** The space it belongs to (it may write only there), or null for a deployment token. */
  spaceId: number | null;
}

/** What {@link AccessTokensService.authenticateRequest} reads of an HTTP request. */
export interface TokenBearingRequest {
  headers: Record<string, string | string[] | undefined>;
  /** The client address (Fastify's and Express's `request.ip`), kept as the token's last use. */
  ip?: string;
}

export const ACCESS_TOKEN_HEADER = 'access-token';
/** A verified token is trusted this long before its row is read again. */
const VERIFIED_TTL_MS = 1_000;
const VERIFIED_CACHE_LIMIT = 10_000;
/** How long a token counts as one this instance has seen valid, for the address budget. */
const KNOWN_GOOD_MS = 10 * 60_000;
/** Last-used times are written in batches, at most this often. */
const LAST_USED_FLUSH_MS = 30_000;
/** The longest client address kept (an IPv6 address in full, IPv4-mapped). */
const MAX_ADDRESS_LENGTH = 45;
const MAX_SPACE_ID = 2_147_483_647;
/** The longest chain of rotations followed to name a rotated token's current successor. */
const MAX_SUCCESSOR_HOPS = 100;

@Injectable()
export class AccessTokensService implements OnApplicationShutdown {
  /** `until` is never past the token's expiry: a cached answer cannot outlive it. */
  private readonly verified = new Map<string, { token: AuthenticatedToken; until: number }>();
  /** Token rows being read, by hash. */
  private readonly lookups = new SingleFlight<string, AccessTokenEntity | null>();
  private readonly lastUsed = new Map<string, { at: number; from: string | undefined }>();
  private readonly perRequest = new WeakMap<object, Promise<AuthenticatedToken>>();
  private readonly knownGood = new Map<string, { id: string; at: number }>();
  private flushTimer?: NodeJS.Timeout;
  /**
   * A check that read a token's row before a revocation (or rotation) forgot the token must not
   * put what it read back into the cache. Every forget takes the next generation; `forgottenAt`
   * keeps, while checks are in flight, the generation of each token forgotten meanwhile.
   */
  private generation = 0;
  private readonly forgottenAt = new Map<string, number>();
  /** Checks that began before this generation cache nothing (set when forgottenAt overflowed). */
  private cacheNothingBefore = 0;
  private checksInFlight = 0;

  constructor(
    @InjectRepository(AccessTokenEntity) private readonly tokens: Repository<AccessTokenEntity>,
    private readonly transactions: TransactionRunner,
  ) {}

  /**
   * Creates a token with `scopes` (default `["query"]`; validated as {@link parseTokenScopes}
   * does), for a space or the deployment (`options.spaceId`), expiring at `options.expiresAt` or
   * never. The name is checked as parseDisplayName does. Its value is returned this once and
   * never stored.
   */
  async create(
    name: string,
    scopes: readonly TokenScope[] = DEFAULT_TOKEN_SCOPES,
    options: CreateTokenOptions = {},
  ): Promise<CreatedAccessToken> {
    const now = Date.now();
    const entity = this.newToken(
      parseDisplayName(name, 'Token name'),
      parseTokenScopes(scopes),
      checkSpaceId(options.spaceId),
      checkExpiry(options.expiresAt, now),
      checkCreator(options.createdBy),
      now,
    );
    if (!options.uniqueName) {
      await this.tokens.insert(entity.row);
      return entity.created;
    }
    await this.transactions.run(async (manager) => {
      await refuseTakenName(manager, entity.row, now);
      await manager.getRepository(AccessTokenEntity).insert(entity.row);
    });
    return entity.created;
  }

  /**
   * The live tokens (neither revoked nor expired), oldest first. Without a filter, all of them;
   * with one, those of `filter.spaceIds`, and deployment tokens when `filter.deployment`.
   */
  async list(filter?: TokenListFilter): Promise<AccessTokenInfo[]> {
    await this.flushLastUsed();
    let owners: Array<FindOptionsWhere<AccessTokenEntity>> = [{}];
    if (filter) {
      owners = [];
      const spaceIds = [...new Set(filter.spaceIds ?? [])];
      if (spaceIds.length > 0) owners.push({ spaceId: In(spaceIds) });
      if (filter.deployment) owners.push({ spaceId: IsNull() });
      if (owners.length === 0) return [];
    }
    const now = Date.now();
    const rows = await this.tokens.find({
      where: owners.flatMap((owner) => liveAt(now).map((live) => ({ ...owner, ...live }))),
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    return rows.map(toInfo);
  }

  /** A live token (neither revoked nor expired) by id, or null. */
  async find(id: string): Promise<AccessTokenInfo | null> {
    await this.flushLastUsed();
    const row = await this.tokens.findOne({
      where: liveAt(Date.now()).map((live) => ({ id, ...live })),
    });
    return row ? toInfo(row) : null;
  }

  /**
   * Replaces a live token with a new secret (a new id) of the same name, scopes and space. The new
   * one lives as long as the old one was made to (its expiry minus its creation) from now, or
   * never; the old one keeps working until now + `graceMs` (0: revoked at once; at most 30 days;
   * never later than its own expiry). Both writes commit together. Null when no live token has
   * that id. A token already rotated (live during its grace) is not rotated again: that is
   * INVALID_ARGUMENT, naming the prefix of its successor, the token to rotate instead. It may
   * still be revoked. The new one's creator is `options.createdBy` (who rotated it), else the old
   * one's.
   */
  async rotate(
    id: string,
    graceMs: number,
    options: { createdBy?: string | null } = {},
  ): Promise<RotatedAccessToken | null> {
    const rotatedBy = options.createdBy === undefined ? undefined : checkCreator(options.createdBy);
    if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_ROTATION_GRACE_MS) {
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        `Rotation grace must be a whole number of milliseconds from 0 to ${MAX_ROTATION_GRACE_MS} (30 days)`,
      );
    }
    type Rotation = RotatedAccessToken | { replacedBy: string } | null;
    const result = await this.transactions.run(async (manager): Promise<Rotation> => {
      const tokens = manager.getRepository(AccessTokenEntity);
      const now = Date.now();
      const replacement = randomUUID();
      // Claimed first: a concurrent rotation of the same token waits for this row and then finds
      // it replaced, so one token never gets two successors.
      const claimed = await tokens.update(
        liveAt(now).map((live) => ({ id, replacedBy: IsNull(), ...live })),
        { replacedBy: replacement },
      );
      if ((claimed.affected ?? 0) === 0) {
        const rotated = await tokens.findOne({
          select: { id: true, replacedBy: true },
          where: liveAt(now).map((live) => ({ id, ...live })),
        });
        return rotated?.replacedBy ? { replacedBy: rotated.replacedBy } : null;
      }
      const old = await tokens.findOneByOrFail({ id });
      const lifetime = old.expiresAt === null ? null : old.expiresAt - old.createdAt;
      const next = this.newToken(
        old.name,
        old.scopes,
        old.spaceId,
        lifetime === null ? null : Math.min(now + lifetime, latestTokenExpiry(now)),
        rotatedBy === undefined ? (old.createdBy ?? null) : rotatedBy,
        now,
        replacement,
      );
      const graceEnd = Math.min(now + graceMs, old.expiresAt ?? Infinity);
      const ended = { expiresAt: graceEnd, revokedAt: graceMs === 0 ? now : null };
      await tokens.update({ id }, ended);
      await tokens.insert(next.row);
      return { token: next.created, previous: toInfo(Object.assign(old, ended)) };
    });
    if (result && 'replacedBy' in result) throw await this.alreadyRotated(result.replacedBy);
    if (result) this.forget(id);
    return result;
  }

  /**
   * Revokes a token, one in its rotation grace included; it stops working on this instance at
   * once. False when there was none.
   */
  async revoke(id: string): Promise<boolean> {
    const result = await this.tokens.update({ id, revokedAt: IsNull() }, { revokedAt: Date.now() });
    this.forget(id);
    return (result.affected ?? 0) > 0;
  }

  /**
   * Revokes every token `createdBy` created that still works (one in its rotation grace included),
   * in space `spaceId` only when given (null: deployment tokens only). Answers them as they were,
   * for the caller's audit trail. `within`: the caller's transaction (one of the module's runner),
   * so that the revocation commits with the change that calls for it. They stop working on this
   * instance once committed, and on others within a second, as any revocation.
   */
  async revokeCreatedBy(
    createdBy: string,
    spaceId?: number | null,
    within?: EntityManager,
  ): Promise<AccessTokenInfo[]> {
    const creator = checkCreator(createdBy);
    if (creator === null) return [];
    const work = async (manager: EntityManager) => {
      const tokens = manager.getRepository(AccessTokenEntity);
      const now = Date.now();
      const owner =
        spaceId === undefined ? {} : spaceId === null ? { spaceId: IsNull() } : { spaceId };
      const rows = await tokens.find({
        where: liveAt(now).map((live) => ({ createdBy: creator, ...owner, ...live })),
        order: { createdAt: 'ASC', id: 'ASC' },
      });
      if (rows.length > 0)
        await tokens.update(
          { id: In(rows.map((row) => row.id)), revokedAt: IsNull() },
          { revokedAt: now },
        );
      return rows.map(toInfo);
    };
    const revoked = within ? await work(within) : await this.transactions.run(work);
    // Within a caller's transaction this runs before its commit: a check in between may keep the
    // token as valid for VERIFIED_TTL_MS more, no longer than another instance would.
    for (const token of revoked) this.forget(token.id);
    return revoked;
  }

  /**
   * Checks a presented token. Missing: TOKEN_REQUIRED. Malformed, unknown, revoked and expired
   * answer alike with INVALID_TOKEN; a malformed one is refused by its checksum before any
   * database read. `from`, the client address, is kept as the token's last use.
   */
  async authenticate(presented: string | undefined, from?: string): Promise<AuthenticatedToken> {
    if (presented === undefined || presented === '')
      throw new LoyaltyException(ErrorCode.TOKEN_REQUIRED);
    // The hash first: a token that hashes to a verified one is that token, so the checksum (costly
    // next to a map lookup) is only computed before a database read.
    const hash = hashToken(presented);
    const now = Date.now();
    const cached = this.verified.get(hash);
    let token = cached && cached.until > now ? cached.token : undefined;
    let remember = true;
    if (!token) {
      if (!isWellFormedToken(presented)) throw new LoyaltyException(ErrorCode.INVALID_TOKEN);
      const startedAt = this.generation;
      this.checksInFlight++;
      let row: AccessTokenEntity | null;
      try {
        // Requests that present the token together (its trust just expired) share one read, as
        // long as nothing was revoked or rotated since it began (the generation).
        row = await this.lookups.run(hash, startedAt, () =>
          this.tokens.findOne({
            select: {
              id: true,
              name: true,
              scopes: true,
              spaceId: true,
              expiresAt: true,
              revokedAt: true,
            },
            where: { tokenHash: hash },
          }),
        );
      } finally {
        this.checksInFlight--;
      }
      // Forgotten while the row was on its way (revoked, rotated): valid when read, so this
      // request passes, but the row is stale and must not outlive the revocation in the cache.
      remember = !row || !this.forgottenSince(row.id, startedAt);
      if (this.checksInFlight === 0) this.forgottenAt.clear();
      if (!row || row.revokedAt !== null || (row.expiresAt !== null && row.expiresAt <= now)) {
        this.verified.delete(hash);
        throw new LoyaltyException(ErrorCode.INVALID_TOKEN);
      }
      token = { id: row.id, name: row.name, scopes: row.scopes, spaceId: row.spaceId };
      if (remember) {
        if (this.verified.size >= VERIFIED_CACHE_LIMIT) this.verified.clear();
        this.verified.set(hash, {
          token,
          until: Math.min(now + VERIFIED_TTL_MS, row.expiresAt ?? Infinity),
        });
      }
    }
    const good = this.knownGood.get(hash);
    if (good) good.at = now;
    else if (remember) {
      if (this.knownGood.size >= VERIFIED_CACHE_LIMIT) this.knownGood.clear();
      this.knownGood.set(hash, { id: token.id, at: now });
    }
    this.markUsed(token.id, now, from);
    return token;
  }

  /**
   * True when this instance found the token valid in the last 10 minutes. While a client address
   * is over its budget, such tokens are still looked up (and may pass); others are refused
   * without a lookup. So a valid client is not starved by junk sent from the same address.
   */
  wasValidRecently(presented: string | undefined): boolean {
    if (!presented || !isWellFormedToken(presented)) return false;
    const entry = this.knownGood.get(hashToken(presented));
    return entry !== undefined && Date.now() - entry.at < KNOWN_GOOD_MS;
  }

  /** Authenticates an HTTP request once, however many resolvers ask. */
  authenticateRequest(request: TokenBearingRequest): Promise<AuthenticatedToken> {
    let result = this.perRequest.get(request);
    if (!result) {
      const header = request.headers[ACCESS_TOKEN_HEADER];
      result = this.authenticate(Array.isArray(header) ? header[0] : header, request.ip);
      this.perRequest.set(request, result);
    }
    return result;
  }

  /**
   * Authenticates an HTTP request (once, as {@link authenticateRequest}) and requires `scope` of
   * its token: a valid token without it is refused with 403 INSUFFICIENT_SCOPE.
   */
  async authorizeRequest(
    request: TokenBearingRequest,
    scope: TokenScope,
  ): Promise<AuthenticatedToken> {
    const token = await this.authenticateRequest(request);
    if (!hasScope(token, scope)) throw insufficientScope(scope);
    return token;
  }

  async flushLastUsed(): Promise<void> {
    const pending = [...this.lastUsed];
    this.lastUsed.clear();
    for (const [id, { at, from }] of pending) {
      await this.tokens.update(
        { id },
        from === undefined ? { lastUsedAt: at } : { lastUsedAt: at, lastUsedFrom: from },
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.flushTimer);
    await this.flushLastUsed().catch(() => undefined);
  }

  private markUsed(id: string, at: number, from: string | undefined): void {
    const address =
      typeof from === 'string' && from !== '' ? from.slice(0, MAX_ADDRESS_LENGTH) : undefined;
    // A use with no address known (a host that calls authenticate() itself) keeps the last one.
    this.lastUsed.set(id, { at, from: address ?? this.lastUsed.get(id)?.from });
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        void this.flushLastUsed().catch(() => undefined);
      }, LAST_USED_FLUSH_MS);
      this.flushTimer.unref();
    }
  }

  /**
   * The refusal of rotating a token that was rotated already: it names the live end of its chain
   * of successors, the token to rotate instead.
   */
  private async alreadyRotated(successorId: string): Promise<LoyaltyException> {
    const now = Date.now();
    let next: string | null = successorId;
    let successor: AccessTokenEntity | null = null;
    for (let hop = 0; next !== null && hop < MAX_SUCCESSOR_HOPS; hop++) {
      successor = await this.tokens.findOne({
        select: { id: true, prefix: true, replacedBy: true, revokedAt: true, expiresAt: true },
        where: { id: next },
      });
      next = successor?.replacedBy ?? null;
    }
    const live =
      successor !== null &&
      successor.revokedAt === null &&
      (successor.expiresAt === null || successor.expiresAt > now);
    return new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      live
        ? `This token was already rotated: rotate its successor ${successor!.prefix}... instead ` +
            `(this one works until its grace ends, or until it is revoked)`
        : `This token was already rotated and its successor is revoked or expired: revoke this ` +
            `one, or create a new token`,
    );
  }

  /** True when `id` was forgotten after the generation `since`. */
  private forgottenSince(id: string, since: number): boolean {
    return since < this.cacheNothingBefore || (this.forgottenAt.get(id) ?? 0) > since;
  }

  /** Drops what this instance remembers of a token that was revoked or rotated. */
  private forget(id: string): void {
    this.generation++;
    if (this.checksInFlight > 0) {
      if (this.forgottenAt.size >= VERIFIED_CACHE_LIMIT) {
        this.forgottenAt.clear();
        this.cacheNothingBefore = this.generation;
      }
      this.forgottenAt.set(id, this.generation);
    }
    for (const [hash, entry] of this.verified) {
      if (entry.token.id === id) this.verified.delete(hash);
    }
    for (const [hash, entry] of this.knownGood) if (entry.id === id) this.knownGood.delete(hash);
  }

  private newToken(
    name: string,
    scopes: TokenScope[],
    spaceId: number | null,
    expiresAt: number | null,
    createdBy: string | null,
    now: number,
    id: string = randomUUID(),
  ): { row: AccessTokenEntity; created: CreatedAccessToken } {
    const token = generateToken();
    const row = Object.assign(new AccessTokenEntity(), {
      id,
      name,
      prefix: displayPrefixOf(token),
      scopes: [...scopes],
      tokenHash: hashToken(token),
      spaceId,
      createdAt: now,
      expiresAt,
      lastUsedAt: null,
      lastUsedFrom: null,
      revokedAt: null,
      replacedBy: null,
      createdBy,
    });
    // Built before the insert, which may leave the columns' stored forms on the entity.
    return { row, created: { ...toInfo(row), token } };
  }
}

/**
 * Refuses `token`'s name when a live token of its owner has it, in any letter case. Two creations
 * for one owner at once do not both pass: the second waits for the first's commit (under the
 * owner's key lock, or the owner's rows read under a write lock, which on MySQL also lock the gap
 * where a new one would go), or deadlocks and is retried, and then sees the first. SQLite runs one
 * write transaction at a time.
 */
async function refuseTakenName(
  manager: EntityManager,
  token: AccessTokenEntity,
  now: number,
): Promise<void> {
  const dialect = dialectOf(manager);
  const lock = dialect.keyLock(`access-token-names:${token.spaceId ?? 'deployment'}`);
  if (lock) await query(manager, lock.sql, lock.params);
  const owner = token.spaceId === null ? 'space_id IS NULL' : 'space_id = ?';
  const rows: Array<{ name: string; expires_at: unknown }> = await query(
    manager,
    `SELECT name, expires_at FROM access_tokens WHERE ${owner} AND revoked_at IS NULL${dialect.lockRows('update')}`,
    token.spaceId === null ? [] : [token.spaceId],
  );
  const wanted = token.name.toLowerCase();
  const taken = rows.some(
    (row) =>
      row.name.toLowerCase() === wanted &&
      (row.expires_at === null || Number(row.expires_at) > now),
  );
  if (!taken) return;
  const owned = token.spaceId === null ? 'the deployment' : `space ${token.spaceId}`;
  throw new LoyaltyException(
    ErrorCode.ALREADY_EXISTS,
    `A live token of ${owned} is named "${token.name}" already: choose another name, or rotate or revoke that token`,
  );
}

/** Conditions (any of) for a token that is live at `now`: not revoked, not expired. */
function liveAt(now: number): Array<FindOptionsWhere<AccessTokenEntity>> {
  return [
    { revokedAt: IsNull(), expiresAt: IsNull() },
    { revokedAt: IsNull(), expiresAt: MoreThan(now) },
  ];
}

function checkSpaceId(spaceId: unknown): number | null {
  if (spaceId === undefined || spaceId === null) return null;
  if (
    typeof spaceId !== 'number' ||
    !Number.isInteger(spaceId) ||
    spaceId < 1 ||
    spaceId > MAX_SPACE_ID
  ) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `A token's space must be a space id (an integer from 1 to ${MAX_SPACE_ID})`,
    );
  }
  return spaceId;
}

function checkExpiry(expiresAt: unknown, now: number): number | null {
  if (expiresAt === undefined || expiresAt === null) return null;
  if (typeof expiresAt !== 'number' || !Number.isInteger(expiresAt)) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      'Token expiry must be a moment in epoch milliseconds, or null for never',
    );
  }
  if (expiresAt <= now) {
    throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'Token expiry must be in the future');
  }
  if (expiresAt > latestTokenExpiry(now)) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      'Token expiry must be at most 5 years ahead',
    );
  }
  return expiresAt;
}

const iso = (millis: number | null): string | null =>
  millis === null ? null : new Date(millis).toISOString();

function toInfo(entity: AccessTokenEntity): AccessTokenInfo {
  return {
    id: entity.id,
    name: entity.name,
    prefix: entity.prefix,
    scopes: [...entity.scopes],
    spaceId: entity.spaceId ?? null,
    createdAt: new Date(entity.createdAt).toISOString(),
    expiresAt: iso(entity.expiresAt ?? null),
    lastUsedAt: iso(entity.lastUsedAt ?? null),
    lastUsedFrom: entity.lastUsedFrom ?? null,
    createdBy: entity.createdBy ?? null,
  };
}

/** A token's creator as given: at most 64 characters, not blank; null or absent: not told. */
function checkCreator(createdBy: string | null | undefined): string | null {
  if (createdBy === undefined || createdBy === null) return null;
  if (typeof createdBy !== 'string' || createdBy.trim() === '' || createdBy.length > 64)
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      "A token's creator must be 1 to 64 characters",
    );
  return createdBy;
}
