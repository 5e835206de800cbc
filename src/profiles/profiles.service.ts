import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { performance } from 'node:perf_hooks';
import { EntityManager, Repository } from 'typeorm';
import type { ProfileRecord } from '../records/ingest-record';
import { RecordOutcome, accepted } from '../records/record-outcome';
import { addressKeyOf } from '../common/address-key';
import { chunk, SqlDialect } from '../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../storage/sql-dialect.provider';
import { afterCommit } from '../storage/transactions/transaction-runner';
import { SingleFlight } from '../common/single-flight';
import { throwIfPastDeadline } from '../common/deadline/deadline';
import { Address } from './address.model';
import { EntityRows } from '../storage/schema/entity-rows';
import { ProfileEntity } from './profile.entity';
import { query } from '../storage/statements';

const STORED_LIMIT = 1_000_000;
/**
 * Profiles read for pages are reused this long: a profile written through another instance shows
 * within it (plus the response cache's age); one written through this instance shows at once.
 */
const PAGE_PROFILE_TTL_MS = 500;
const PAGE_PROFILE_LIMIT = 100_000;

@Injectable()
export class ProfilesService {
  /** Address keys known to have a profile row (bounded; forgotten all at once when full). */
  private readonly stored = new Set<string>();
  /** Addresses recently read for pages, until when they may be served (performance.now()). */
  private readonly recent = new Map<string, { address: Address; until: number }>();
  /** Moves on every profile write this instance commits: reads begun before it are not kept. */
  private writes = 0;
  /** Reads of a page's missing addresses, by the keys read. */
  private readonly pageReads = new SingleFlight<string, Address[]>();

  /** Profiles read by plain SQL, through the entity's columns. */
  private readonly profileRows: EntityRows<ProfileEntity>;

  constructor(
    @InjectRepository(ProfileEntity) private readonly profiles: Repository<ProfileEntity>,
    @InjectSqlDialect() private readonly dialect: SqlDialect,
  ) {
    this.profileRows = new EntityRows(profiles);
  }

  /**
   * The addresses of a page's entries, in order: from the profiles read for pages in the last
   * PAGE_PROFILE_TTL_MS, the rest in one query. Past the request's deadline it reads nothing
   * (REQUEST_TIMEOUT).
   */
  addressesOfPage(request: object | undefined, keys: readonly string[]): Promise<Address[]> {
    throwIfPastDeadline(request);
    return this.pageAddresses(keys);
  }

  /**
   * loadAddresses through a short-lived cache: the addresses of the pages being read (the top of
   * a board, above all) cost a map lookup instead of a query. Served objects are shared.
   */
  private async pageAddresses(keys: readonly string[]): Promise<Address[]> {
    const now = performance.now();
    const found: Array<Address | undefined> = [];
    const missing: string[] = [];
    for (const key of keys) {
      const hit = this.recent.get(key);
      if (hit && hit.until > now) found.push(hit.address);
      else {
        found.push(undefined);
        missing.push(key);
      }
    }
    if (missing.length === 0) return found as Address[];
    const writes = this.writes;
    // Requests for the same page miss together when its addresses expire: one read for them all.
    const loaded = await this.pageReads.run(missing.join('\n'), writes, () =>
      this.loadAddresses(missing),
    );
    // A write committed meanwhile may not be in what was read: serve it, keep none of it.
    const keep = writes === this.writes;
    const until = now + PAGE_PROFILE_TTL_MS;
    let next = 0;
    return found.map((address) => {
      if (address) return address;
      const read = loaded[next++];
      if (keep) {
        this.recent.delete(read.id);
        if (this.recent.size >= PAGE_PROFILE_LIMIT)
          this.recent.delete(this.recent.keys().next().value!);
        this.recent.set(read.id, { address: read, until });
      }
      return read;
    });
  }

  /** Once profile rows of `keys` are committed: pages read them again. */
  private forgetPageAddresses(keys: Iterable<string>): void {
    this.writes++;
    for (const key of keys) this.recent.delete(key);
  }

  /** By lower-cased address. An address without a profile row still gets an Address. */
  async loadAddresses(keys: readonly string[]): Promise<Address[]> {
    // Plain SQL: TypeORM's find builds the statement anew for every page.
    const rows =
      keys.length === 0
        ? []
        : await query(
            this.profiles.manager,
            `SELECT ${this.profileRows.columns()} FROM profiles
             WHERE address_key IN (${keys.map(() => '?').join(', ')})`,
            [...keys],
          );
    const byKey = new Map(
      rows.map((row) => this.profileRows.entity(row)).map((row) => [row.addressKey, row]),
    );
    return keys.map((key) => {
      const row = byKey.get(key);
      return Object.assign(new Address(), {
        id: key,
        address: row?.address ?? key,
        username: row?.username ?? null,
        avatar: row?.avatar ?? null,
      });
    });
  }

  /**
   * Records addresses as first received; later spellings of the same address change nothing.
   * Addresses this process saw committed are skipped (profile rows are never deleted).
   */
  async rememberAddresses(manager: EntityManager, addresses: Iterable<string>): Promise<void> {
    await this.rememberSpellings(
      manager,
      Array.from(addresses, (address) => [addressKeyOf(address), address] as const),
    );
  }

  /** {@link rememberAddresses} for callers that have each address's key already. */
  async rememberSpellings(
    manager: EntityManager,
    spellings: Iterable<readonly [key: string, address: string]>,
  ): Promise<void> {
    const byKey = new Map<string, string>();
    for (const [key, address] of spellings) {
      if (!byKey.has(key) && !this.stored.has(key)) byKey.set(key, address);
    }
    if (byKey.size === 0) return;
    // In key order: concurrent writers then lock rows in the same order (no deadlock).
    for (const part of chunk(
      [...byKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      500,
    )) {
      await query(
        manager,
        this.dialect.insertIgnore('profiles', ['address_key', 'address'], part.length),
        part.flat(),
      );
    }
    afterCommit(manager, () => {
      if (this.stored.size + byKey.size > STORED_LIMIT) this.stored.clear();
      for (const key of byKey.keys()) this.stored.add(key);
      // A new row gives the address its first spelling (pages showed the lower-cased key).
      this.forgetPageAddresses(byKey.keys());
    });
  }

  async upsertProfile(manager: EntityManager, record: ProfileRecord): Promise<RecordOutcome> {
    const repository = manager.getRepository(ProfileEntity);
    const addressKey = addressKeyOf(record.address);
    const profile =
      (await repository.findOneBy({ addressKey })) ??
      Object.assign(new ProfileEntity(), {
        addressKey,
        address: record.address,
        username: null,
        avatar: null,
      });
    if (record.username !== undefined) profile.username = record.username;
    if (record.avatar !== undefined) profile.avatar = record.avatar;
    await repository.save(profile);
    afterCommit(manager, () => this.forgetPageAddresses([addressKey]));
    return accepted();
  }
}
