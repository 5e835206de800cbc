import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { EntityManager, IsNull, MoreThan, Repository } from 'typeorm';
import { AccessTokensService, type AccessTokenInfo } from '../../../auth/access-tokens.service';
import { ErrorCode } from '../../../common/errors/error-code';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import { parseDisplayName } from '../../../common/text/display-name';
import { SqlDialect } from '../../../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../../../storage/sql-dialect.provider';
import { TransactionRunner } from '../../../storage/transactions/transaction-runner';
import { AdminEntity } from './admin.entity';
import {
  AdminInputError,
  checkNewPassword,
  MAX_PASSWORD_LENGTH,
  normalizeEmail,
} from './admins.service';
import { hashPassword, verifyPassword } from './password-hasher';
import { InvitationEntity } from './invitation.entity';
import { isSpaceRole, SpaceRole, SPACE_ROLES } from './roles';
import { SpaceMemberEntity } from './space-member.entity';
import { query } from '../../../storage/statements';

/** An invitation link works this long, once. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const INVITATION_PATH = '/dashboard/invitations/';

export interface MemberInfo {
  accountId: string;
  email: string;
  name: string | null;
  role: SpaceRole;
  disabled: boolean;
  since: string;
  /** The space's working tokens this member created or rotated: removing them revokes these. */
  tokensCreated: number;
}

export interface InvitationInfo {
  id: string;
  spaceId: number;
  email: string;
  role: SpaceRole;
  createdAt: string;
  expiresAt: string;
}

/** Returned once, when the invitation is made: the only time its secret exists. */
export interface CreatedInvitation extends InvitationInfo {
  /** The path to send the invitee (the owner copies it; no mail is sent). */
  path: string;
}

/** An open invitation as its link shows it, with whether the email has an account already. */
export interface OpenInvitation extends InvitationInfo {
  accountExists: boolean;
}

const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export function parseRole(value: unknown): SpaceRole {
  if (!isSpaceRole(value)) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `role must be one of ${SPACE_ROLES.join(', ')}`,
    );
  }
  return value;
}

/** The members of spaces, their roles, and the invitations that add them. */
@Injectable()
export class MembersService {
  constructor(
    @InjectRepository(SpaceMemberEntity) private readonly members: Repository<SpaceMemberEntity>,
    @InjectRepository(InvitationEntity) private readonly invitations: Repository<InvitationEntity>,
    private readonly transactions: TransactionRunner,
    @InjectSqlDialect() private readonly dialect: SqlDialect,
    private readonly tokens: AccessTokensService,
  ) {}

  async rolesOf(accountId: string): Promise<Map<number, SpaceRole>> {
    const rows = await this.members.find({
      select: { spaceId: true, role: true },
      where: { accountId },
    });
    return new Map(rows.map((row) => [row.spaceId, row.role]));
  }

  async list(spaceId: number): Promise<MemberInfo[]> {
    const rows = await this.members
      .createQueryBuilder('m')
      .innerJoin(AdminEntity, 'a', 'a.id = m.account_id')
      // By property: TypeORM names the columns and quotes each output name as the database needs.
      .select('m.accountId', 'accountId')
      .addSelect('a.email', 'email')
      .addSelect('a.name', 'name')
      .addSelect('m.role', 'role')
      .addSelect('a.disabledAt', 'disabledAt')
      .addSelect('m.createdAt', 'createdAt')
      .where('m.space_id = :spaceId', { spaceId })
      .orderBy('a.email', 'ASC')
      .getRawMany<{
        accountId: string;
        email: string;
        name: string | null;
        role: SpaceRole;
        disabledAt: number | string | null;
        createdAt: number | string;
      }>();
    const created = new Map<string, number>();
    for (const token of await this.tokens.list({ spaceIds: [spaceId] }))
      if (token.createdBy !== null)
        created.set(token.createdBy, (created.get(token.createdBy) ?? 0) + 1);
    return rows.map((row) => ({
      accountId: row.accountId,
      email: row.email,
      name: row.name,
      role: row.role,
      disabled: row.disabledAt !== null,
      since: new Date(Number(row.createdAt)).toISOString(),
      tokensCreated: created.get(row.accountId) ?? 0,
    }));
  }

  /**
   * Changes a member's role. A space keeps at least one owner: the last one cannot be demoted.
   * MEMBER_NOT_FOUND when the account is no member of the space.
   */
  async setRole(
    spaceId: number,
    accountId: string,
    role: SpaceRole,
  ): Promise<{ email: string; from: SpaceRole }> {
    return this.transactions.run(async (manager) => {
      const member = await manager.findOneBy(SpaceMemberEntity, { spaceId, accountId });
      if (!member) throw new LoyaltyException(ErrorCode.MEMBER_NOT_FOUND);
      if (member.role === 'owner' && role !== 'owner') {
        await this.keepAnOwner(manager, spaceId);
        await closeInvitationsBy(manager, accountId, spaceId);
      }
      await manager.update(SpaceMemberEntity, { spaceId, accountId }, { role });
      return { email: await emailOf(manager, accountId), from: member.role };
    });
  }

  /** Removes a member from a space; the last owner stays. */
  /**
   * Removes a member, closing the invitations they made and, unless `keepTokens`, revoking the
   * space's tokens they created (or rotated), all in one transaction.
   */
  async remove(
    spaceId: number,
    accountId: string,
    { keepTokens = false }: { keepTokens?: boolean } = {},
  ): Promise<{ email: string; role: SpaceRole; revokedTokens: AccessTokenInfo[] }> {
    return this.transactions.run(async (manager) => {
      const member = await manager.findOneBy(SpaceMemberEntity, { spaceId, accountId });
      if (!member) throw new LoyaltyException(ErrorCode.MEMBER_NOT_FOUND);
      if (member.role === 'owner') await this.keepAnOwner(manager, spaceId);
      await closeInvitationsBy(manager, accountId, spaceId);
      await manager.delete(SpaceMemberEntity, { spaceId, accountId });
      const revokedTokens = keepTokens
        ? []
        : await this.tokens.revokeCreatedBy(accountId, spaceId, manager);
      return { email: await emailOf(manager, accountId), role: member.role, revokedTokens };
    });
  }

  /** Makes an invitation; its link is returned this once. */
  async invite(
    spaceId: number,
    emailInput: unknown,
    roleInput: unknown,
    invitedBy: string,
  ): Promise<CreatedInvitation> {
    if (typeof emailInput !== 'string') {
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'email is required');
    }
    const email = asInvalidArgument(() => normalizeEmail(emailInput));
    const role = parseRole(roleInput);
    const secret = randomBytes(32).toString('base64url');
    const now = Date.now();
    const invitation = Object.assign(new InvitationEntity(), {
      id: randomUUID(),
      tokenHash: hashSecret(secret),
      spaceId,
      email,
      role,
      invitedBy,
      createdAt: now,
      expiresAt: now + INVITATION_TTL_MS,
      closedAt: null,
    });
    await this.transactions.run(async (manager) => {
      const account = await manager.findOneBy(AdminEntity, { email });
      if (
        account &&
        (await manager.existsBy(SpaceMemberEntity, { spaceId, accountId: account.id }))
      )
        throw new LoyaltyException(
          ErrorCode.ALREADY_EXISTS,
          `${email} is a member of this space already`,
        );
      await manager.insert(InvitationEntity, invitation);
    });
    return { ...toInvitationInfo(invitation), path: `${INVITATION_PATH}${secret}` };
  }

  async openInvitations(spaceId: number): Promise<InvitationInfo[]> {
    const rows = await this.invitations.find({
      where: { spaceId, closedAt: IsNull(), expiresAt: MoreThan(Date.now()) },
      order: { createdAt: 'ASC' },
    });
    return rows.map(toInvitationInfo);
  }

  /** Withdraws an open invitation of the space; false when there is none. */
  async withdraw(spaceId: number, id: string): Promise<InvitationInfo | null> {
    const row = await this.invitations.findOneBy({ id, spaceId, closedAt: IsNull() });
    if (!row) return null;
    const result = await this.invitations.update(
      { id, closedAt: IsNull() },
      { closedAt: Date.now() },
    );
    return (result.affected ?? 0) > 0 ? toInvitationInfo(row) : null;
  }

  /** The open invitation a link's secret names; null when unknown, used, withdrawn or expired. */
  async findOpen(secret: string): Promise<OpenInvitation | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(secret)) return null;
    const row = await this.invitations.findOneBy({ tokenHash: hashSecret(secret) });
    if (!row || row.closedAt !== null || row.expiresAt <= Date.now()) return null;
    if (!(await inviterMayStill(this.invitations.manager, row))) return null;
    const accountExists = await this.invitations.manager.existsBy(AdminEntity, {
      email: row.email,
    });
    return { ...toInvitationInfo(row), accountExists };
  }

  /**
   * Accepts an invitation: a new account sets its name and password; an existing one proves its
   * password. The membership, the account (when new) and the invitation's closing are written in
   * one transaction, and only one acceptance of a link can succeed.
   */
  async accept(
    secret: string,
    form: { name?: unknown; password?: unknown },
  ): Promise<{ accountId: string; invitation: InvitationInfo; created: boolean }> {
    const open = await this.findOpen(secret);
    if (!open) throw new LoyaltyException(ErrorCode.INVITATION_NOT_FOUND);
    const password = typeof form.password === 'string' ? form.password : '';
    let newAccount: AdminEntity | undefined;
    let existingHash: string | undefined;
    if (open.accountExists) {
      const account = await this.invitations.manager.findOneByOrFail(AdminEntity, {
        email: open.email,
      });
      existingHash = account.passwordHash;
      if (!(await verifyPassword(password.slice(0, MAX_PASSWORD_LENGTH), existingHash))) {
        throw new AdminInputError(`The password of ${open.email} is incorrect`);
      }
    } else {
      const name = asInvalidArgument(() => parseDisplayName(form.name, 'Name'));
      checkNewPassword(password);
      newAccount = Object.assign(new AdminEntity(), {
        id: randomUUID(),
        email: open.email,
        name,
        isOperator: false,
        disabledAt: null,
        passwordHash: await hashPassword(password),
        createdAt: Date.now(),
      });
    }
    return this.transactions.run(async (manager) => {
      const closed = await manager.update(
        InvitationEntity,
        { id: open.id, closedAt: IsNull(), expiresAt: MoreThan(Date.now()) },
        { closedAt: Date.now() },
      );
      if ((closed.affected ?? 0) === 0) throw new LoyaltyException(ErrorCode.INVITATION_NOT_FOUND);
      const invitation = await manager.findOneByOrFail(InvitationEntity, { id: open.id });
      if (!(await inviterMayStill(manager, invitation)))
        throw new LoyaltyException(ErrorCode.INVITATION_NOT_FOUND);
      let account = await manager.findOneBy(AdminEntity, { email: open.email });
      if (account && account.disabledAt !== null) {
        throw new AdminInputError(`The account ${open.email} is disabled`);
      }
      if (!account) {
        if (!newAccount) throw new LoyaltyException(ErrorCode.INVITATION_NOT_FOUND);
        await manager.insert(AdminEntity, newAccount);
        account = newAccount;
      } else if (newAccount || account.passwordHash !== existingHash) {
        // The account appeared, or its password changed, since the form was checked.
        throw new AdminInputError('The account changed meanwhile: open the invitation again');
      }
      const member = await manager.findOneBy(SpaceMemberEntity, {
        spaceId: open.spaceId,
        accountId: account.id,
      });
      if (!member) {
        await manager.insert(SpaceMemberEntity, {
          spaceId: open.spaceId,
          accountId: account.id,
          role: open.role,
          createdAt: Date.now(),
        });
      }
      return { accountId: account.id, invitation: open, created: newAccount !== undefined };
    });
  }

  private async keepAnOwner(manager: EntityManager, spaceId: number): Promise<void> {
    // Locked while counted: two owners demoting each other at once cannot both succeed.
    const owners: unknown[] = await query(
      manager,
      `SELECT account_id FROM space_members WHERE space_id = ? AND role = 'owner'${this.dialect.lockRows('update')}`,
      [spaceId],
    );
    if (owners.length <= 1) {
      throw new LoyaltyException(
        ErrorCode.INVALID_ARGUMENT,
        'A space keeps at least one owner: make another member owner first',
      );
    }
  }
}

/**
 * Whether an invitation's maker may still invite into its space: an active operator, or an
 * active owner of the space. An invitation outlives no change of its maker's access.
 */
async function inviterMayStill(manager: EntityManager, invitation: InvitationEntity) {
  const inviter = await manager.findOneBy(AdminEntity, { id: invitation.invitedBy });
  if (!inviter || inviter.disabledAt !== null) return false;
  if (inviter.isOperator) return true;
  const member = await manager.findOneBy(SpaceMemberEntity, {
    spaceId: invitation.spaceId,
    accountId: inviter.id,
  });
  return member?.role === 'owner';
}

/** Closes the open invitations an account made into a space, when it stops owning it. */
async function closeInvitationsBy(manager: EntityManager, accountId: string, spaceId: number) {
  await manager.update(
    InvitationEntity,
    { invitedBy: accountId, spaceId, closedAt: IsNull() },
    { closedAt: Date.now() },
  );
}

async function emailOf(manager: EntityManager, accountId: string) {
  return (await manager.findOneBy(AdminEntity, { id: accountId }))?.email ?? accountId;
}

/** An AdminInputError (what someone typed) as INVALID_ARGUMENT, for the endpoint's envelope. */
function asInvalidArgument<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof AdminInputError)
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, error.message);
    throw error;
  }
}

function toInvitationInfo(row: InvitationEntity): InvitationInfo {
  return {
    id: row.id,
    spaceId: row.spaceId,
    email: row.email,
    role: row.role,
    createdAt: new Date(row.createdAt).toISOString(),
    expiresAt: new Date(row.expiresAt).toISOString(),
  };
}
