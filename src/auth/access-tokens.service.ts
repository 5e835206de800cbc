import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { IsNull, Repository } from 'typeorm';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { AccessTokenEntity } from './access-token.entity';
import { displayPrefixOf, generateToken, hashToken, isWellFormedToken } from './token-format';
import {
  DEFAULT_TOKEN_SCOPES,
  hasScope,
  insufficientScope,
  parseTokenScopes,
  TokenScope,
} from './token-scopes';

/** A token as it may be shown: never its value or hash. */
export interface AccessTokenInfo {
  id: string;
  name: string;
  prefix: string;
  /** What it may be used for, sorted: `query` (POST /query), `ingest` (POST /ingest). */
  scopes: TokenScope[];
  createdAt: string;
  lastUsedAt: string | null;
}

/** Returned once, at creation: the only time the value exists outside its holder. */
export interface CreatedAccessToken extends AccessTokenInfo {
  token: string;
}

export interface AuthenticatedToken {
  id: string;
  name: string;
  scopes: TokenScope[];
}

/** What {@link AccessTokensService.authenticateRequest} reads of an HTTP request. */
export interface TokenBearingRequest {
  headers: Record<string, string | string[] | undefined>;
}

export const ACCESS_TOKEN_HEADER = 'access-token';
/** A verified token is trusted this long before its row is read again. */
const VERIFIED_TTL_MS = 1_000;
const VERIFIED_CACHE_LIMIT = 10_000;
/** How long a token counts as one this instance has seen valid, for the address budget. */
const KNOWN_GOOD_MS = 10 * 60_000;
/** Last-used times are written in batches, at most this often. */
const LAST_USED_FLUSH_MS = 30_000;

@Injectable()
export class AccessTokensService implements OnApplicationShutdown {
  private readonly verified = new Map<string, { token: AuthenticatedToken; until: number }>();
  private readonly lastUsed = new Map<string, number>();
  private readonly perRequest = new WeakMap<object, Promise<AuthenticatedToken>>();
  private readonly knownGood = new Map<string, { id: string; at: number }>();
  private flushTimer?: NodeJS.Timeout;

  constructor(
    @InjectRepository(AccessTokenEntity) private readonly tokens: Repository<AccessTokenEntity>,
  ) {}

  /**
   * Creates a token with `scopes` (default `["query"]`; validated as {@link parseTokenScopes}
   * does). Its value is returned this once and never stored.
   */
  async create(
    name: string,
    scopes: readonly TokenScope[] = DEFAULT_TOKEN_SCOPES,
  ): Promise<CreatedAccessToken> {
    const trimmed = name.trim();
    if (trimmed === '' || trimmed.length > 100) {
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        'Token name must be 1 to 100 characters',
      );
    }
    const granted = parseTokenScopes(scopes);
    const token = generateToken();
    const entity = Object.assign(new AccessTokenEntity(), {
      id: randomUUID(),
      name: trimmed,
      prefix: displayPrefixOf(token),
      scopes: granted,
      tokenHash: hashToken(token),
      createdAt: Date.now(),
      lastUsedAt: null,
      revokedAt: null,
    });
    await this.tokens.insert(entity);
    // insert() may leave the column's stored form on the entity: answer with what was granted.
    return { ...toInfo(entity), scopes: granted, token };
  }

  async list(): Promise<AccessTokenInfo[]> {
    await this.flushLastUsed();
    const rows = await this.tokens.find({
      where: { revokedAt: IsNull() },
      order: { createdAt: 'ASC' },
    });
    return rows.map(toInfo);
  }

  /** Revokes a token; it stops working on this instance at once. False when there was none. */
  async revoke(id: string): Promise<boolean> {
    const result = await this.tokens.update({ id, revokedAt: IsNull() }, { revokedAt: Date.now() });
    for (const [hash, entry] of this.verified) {
      if (entry.token.id === id) this.verified.delete(hash);
    }
    for (const [hash, entry] of this.knownGood) if (entry.id === id) this.knownGood.delete(hash);
    return (result.affected ?? 0) > 0;
  }

  /**
   * Checks a presented token. Missing: TOKEN_REQUIRED. Malformed, unknown and revoked answer alike
   * with INVALID_TOKEN; a malformed one is refused by its checksum before any database read.
   */
  async authenticate(presented: string | undefined): Promise<AuthenticatedToken> {
    if (presented === undefined || presented === '')
      throw new LoyaltyException(ErrorCode.TOKEN_REQUIRED);
    // The hash first: a token that hashes to a verified one is that token, so the checksum (costly
    // next to a map lookup) is only computed before a database read.
    const hash = hashToken(presented);
    const now = Date.now();
    const cached = this.verified.get(hash);
    let token = cached && cached.until > now ? cached.token : undefined;
    if (!token) {
      if (!isWellFormedToken(presented)) throw new LoyaltyException(ErrorCode.INVALID_TOKEN);
      const row = await this.tokens.findOne({
        select: { id: true, name: true, scopes: true, revokedAt: true },
        where: { tokenHash: hash },
      });
      if (!row || row.revokedAt !== null) {
        this.verified.delete(hash);
        throw new LoyaltyException(ErrorCode.INVALID_TOKEN);
      }
      token = { id: row.id, name: row.name, scopes: row.scopes };
      if (this.verified.size >= VERIFIED_CACHE_LIMIT) this.verified.clear();
      this.verified.set(hash, { token, until: now + VERIFIED_TTL_MS });
    }
    const good = this.knownGood.get(hash);
    if (good) good.at = now;
    else {
      if (this.knownGood.size >= VERIFIED_CACHE_LIMIT) this.knownGood.clear();
      this.knownGood.set(hash, { id: token.id, at: now });
    }
    this.markUsed(token.id, now);
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
      result = this.authenticate(Array.isArray(header) ? header[0] : header);
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
    for (const [id, at] of pending) await this.tokens.update({ id }, { lastUsedAt: at });
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.flushTimer);
    await this.flushLastUsed().catch(() => undefined);
  }

  private markUsed(id: string, at: number): void {
    this.lastUsed.set(id, at);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        void this.flushLastUsed().catch(() => undefined);
      }, LAST_USED_FLUSH_MS);
      this.flushTimer.unref();
    }
  }
}

function toInfo(entity: AccessTokenEntity): AccessTokenInfo {
  return {
    id: entity.id,
    name: entity.name,
    prefix: entity.prefix,
    scopes: [...entity.scopes],
    createdAt: new Date(entity.createdAt).toISOString(),
    lastUsedAt: entity.lastUsedAt === null ? null : new Date(entity.lastUsedAt).toISOString(),
  };
}
