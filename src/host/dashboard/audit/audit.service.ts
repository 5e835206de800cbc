import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Brackets, Repository } from 'typeorm';
import { csvField } from '../../../common/csv';
import { AuditEntryEntity } from './audit-entry.entity';

/** What the trail records. Every dashboard, endpoint and CLI action that changes trust is one. */
export type AuditAction =
  | 'sign-in'
  | 'sign-in.failed'
  | 'token.create'
  | 'token.rotate'
  | 'token.revoke'
  | 'member.invite'
  | 'member.join'
  | 'member.role'
  | 'member.remove'
  | 'invitation.withdraw'
  | 'space.privacy'
  | 'space.create'
  | 'space.update'
  | 'space.ingest'
  | 'sprint.create'
  | 'sprint.update'
  | 'quest.create'
  | 'quest.update'
  | 'points.adjust'
  | 'points.upload'
  | 'account.create'
  | 'account.password'
  | 'account.reset-password'
  | 'account.disable'
  | 'account.enable'
  | 'account.remove';

/** Who acted: a signed-in account, the command line, or someone unknown (a failed sign-in). */
export type AuditActor =
  | { id: string; email: string }
  | 'cli'
  | { unknown: string }
  /** An API token (POST /ingest): named `token:<name>`, its id in the entry's detail. */
  | { token: { id: string; name: string } };

export interface AuditEvent {
  actor: AuditActor;
  action: AuditAction;
  spaceId?: number | null;
  target?: string | null;
  /** Plain facts about the action (never a secret): stored as JSON. */
  detail?: Record<string, string | number | boolean | null | readonly string[]>;
  address?: string | null;
}

export interface AuditEntry {
  id: string;
  at: string;
  actor: string;
  actorId: string | null;
  action: string;
  spaceId: number | null;
  target: string | null;
  detail: Record<string, unknown> | null;
  address: string | null;
}

/** The actor of a signed-in account's action. */
export const auditActor = (session: { adminId: string; email: string }): AuditActor => ({
  id: session.adminId,
  email: session.email,
});

/**
 * The entry of a failed sign-in: the account's email when one has the email typed, else
 * `(unknown email)`, never what was typed (it may be a password typed in the wrong field).
 */
export async function failedSignIn(
  accounts: { findByEmail(email: string): Promise<{ email: string } | null> },
  typed: string,
  address: string,
): Promise<AuditEvent> {
  const account = typed.length <= 254 ? await accounts.findByEmail(typed) : null;
  return {
    actor: { unknown: account?.email ?? '(unknown email)' },
    action: 'sign-in.failed',
    address,
  };
}

/** What an audit entry id looks like (see auditId): anything else is no paging cursor. */
export const AUDIT_ID = /^[0-9a-f]{12}-[0-9a-f]{6}-[0-9a-f]{16}$/;

export const AUDIT_CSV_HEADER = 'at,actor,action,space_id,target,detail,address,id';
export const MAX_AUDIT_PAGE = 500;

let sequence = 0;
/** Sorts as written: the time in ms, a per-process sequence, then randomness across instances. */
function auditId(at: number): string {
  sequence = (sequence + 1) % 0x1000000;
  return `${at.toString(16).padStart(12, '0')}-${sequence.toString(16).padStart(6, '0')}-${randomBytes(8).toString('hex')}`;
}

const clip = (value: string, length: number) =>
  value.length > length ? `${value.slice(0, length - 1)}…` : value;

/**
 * The audit trail: entries are inserted and read, never updated or deleted by the service. Lists
 * go newest first, paged by the last id seen.
 */
@Injectable()
export class AuditService {
  private readonly logger = new Logger(AuditService.name);

  constructor(
    @InjectRepository(AuditEntryEntity) private readonly entries: Repository<AuditEntryEntity>,
  ) {}

  /**
   * Records an action that has happened (its change is committed). The answer to the user does
   * not depend on it: should the database refuse the entry, the action stands, and the entry is
   * written to the error log in full instead, so that it is not lost.
   */
  async record(event: AuditEvent): Promise<void> {
    try {
      await this.insert(event);
    } catch (error) {
      this.logger.error(
        `Audit entry not stored (${(error as Error).message}): ${JSON.stringify(event)}`,
      );
    }
  }

  private async insert(event: AuditEvent): Promise<void> {
    const at = Date.now();
    const actor = event.actor;
    const detail = event.detail ? JSON.stringify(event.detail) : null;
    await this.entries.insert({
      id: auditId(at),
      at,
      actorId: typeof actor === 'object' && 'id' in actor ? actor.id : null,
      actor: clip(actorName(actor), 254),
      action: event.action,
      spaceId: event.spaceId ?? null,
      target: event.target == null ? null : clip(event.target, 254),
      detail: detail === null ? null : clip(detail, 1000),
      address: event.address == null ? null : clip(event.address, 45),
    });
  }

  /**
   * One page, newest first: the entries of `spaceId`, or of the whole deployment when it is
   * undefined; `before` is the id of the last entry of the previous page.
   */
  async list(filter: { spaceId?: number; before?: string; limit?: number }): Promise<AuditEntry[]> {
    const limit = Math.min(Math.max(filter.limit ?? 100, 1), MAX_AUDIT_PAGE);
    const query = this.entries.createQueryBuilder('e').orderBy('e.id', 'DESC').take(limit);
    query.where(
      new Brackets((where) => {
        where.where('1 = 1');
        if (filter.spaceId !== undefined)
          where.andWhere('e.space_id = :spaceId', { spaceId: filter.spaceId });
        if (filter.before !== undefined)
          where.andWhere('e.id < :before', { before: filter.before });
      }),
    );
    return (await query.getMany()).map(toEntry);
  }

  /** Every entry of the filter, newest first, read a page at a time. */
  async *all(filter: { spaceId?: number }): AsyncGenerator<AuditEntry> {
    let before: string | undefined;
    for (;;) {
      const page = await this.list({ ...filter, before, limit: MAX_AUDIT_PAGE });
      yield* page;
      if (page.length < MAX_AUDIT_PAGE) return;
      before = page[page.length - 1].id;
    }
  }
}

export function auditCsvLine(entry: AuditEntry): string {
  return [
    entry.at,
    entry.actor,
    entry.action,
    entry.spaceId ?? '',
    entry.target ?? '',
    entry.detail ? JSON.stringify(entry.detail) : '',
    entry.address ?? '',
    entry.id,
  ]
    .map(csvField)
    .join(',');
}

function toEntry(row: AuditEntryEntity): AuditEntry {
  let detail: Record<string, unknown> | null = null;
  if (row.detail !== null) {
    try {
      detail = JSON.parse(row.detail) as Record<string, unknown>;
    } catch {
      detail = { text: row.detail }; // clipped at 1,000 characters
    }
  }
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    actor: row.actor,
    actorId: row.actorId,
    action: row.action,
    spaceId: row.spaceId,
    target: row.target,
    detail,
    address: row.address,
  };
}

function actorName(actor: AuditActor): string {
  if (actor === 'cli') return 'cli';
  if ('email' in actor) return actor.email;
  if ('token' in actor) return `token:${actor.token.name}`;
  return actor.unknown;
}
