import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { LessThan, Repository } from 'typeorm';
import { AdminSessionEntity } from './admin-session.entity';
import { AdminsService } from './admins.service';
import { Access } from './roles';
import { MembersService } from './members.service';

/** Sessions last this long from sign-in; signing out ends one at once. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface DashboardSession {
  adminId: string;
  email: string;
  name: string | null;
  csrfToken: string;
  expiresAt: number;
  /** The SHA-256 of the session cookie: the session's key, never the cookie itself. */
  sessionHash: string;
  /** What the account may reach, read with the session: a role taken away counts at once. */
  access: Access;
}

export const hashSessionCookie = (token: string) =>
  createHash('sha256').update(token).digest('hex');

/** Dashboard sessions: started at sign-in, found by their cookie's hash, ended at sign-out. */
@Injectable()
export class SessionsService {
  constructor(
    @InjectRepository(AdminSessionEntity) private readonly sessions: Repository<AdminSessionEntity>,
    private readonly admins: AdminsService,
    private readonly members: MembersService,
  ) {}

  /** A new session: the cookie value is returned once; only its hash is kept. */
  async start(adminId: string): Promise<{ cookie: string; csrfToken: string }> {
    const cookie = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const now = Date.now();
    await this.sessions.delete({ expiresAt: LessThan(now) });
    await this.sessions.insert({
      tokenHash: hashSessionCookie(cookie),
      adminId,
      csrfToken,
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
    });
    return { cookie, csrfToken };
  }

  /** The live session of a cookie: null when unknown, expired, or its account disabled or gone. */
  async find(cookie: string | undefined): Promise<DashboardSession | null> {
    if (!cookie || cookie.length > 100) return null;
    const sessionHash = hashSessionCookie(cookie);
    const session = await this.sessions.findOneBy({ tokenHash: sessionHash });
    if (!session || session.expiresAt <= Date.now()) return null;
    const admin = await this.admins.findById(session.adminId);
    if (!admin || admin.disabledAt !== null) return null;
    return {
      adminId: admin.id,
      email: admin.email,
      name: admin.name,
      csrfToken: session.csrfToken,
      expiresAt: session.expiresAt,
      sessionHash,
      access: new Access(admin.isOperator, await this.members.rolesOf(admin.id)),
    };
  }

  async end(cookie: string | undefined): Promise<void> {
    if (cookie) await this.sessions.delete({ tokenHash: hashSessionCookie(cookie) });
  }
}
