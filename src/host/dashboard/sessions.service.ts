import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import { LessThan, Repository } from 'typeorm';
import { AdminSessionEntity } from './admin-session.entity';
import { AdminsService } from './admins.service';

/** Sessions last this long from sign-in; signing out ends one at once. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

export interface DashboardSession {
  adminId: string;
  email: string;
  csrfToken: string;
  expiresAt: number;
}

const hash = (token: string) => createHash('sha256').update(token).digest('hex');

@Injectable()
export class SessionsService {
  constructor(
    @InjectRepository(AdminSessionEntity) private readonly sessions: Repository<AdminSessionEntity>,
    private readonly admins: AdminsService,
  ) {}

  /** A new session: the cookie value is returned once; only its hash is kept. */
  async start(adminId: string): Promise<{ cookie: string; csrfToken: string }> {
    const cookie = randomBytes(32).toString('base64url');
    const csrfToken = randomBytes(32).toString('base64url');
    const now = Date.now();
    await this.sessions.delete({ expiresAt: LessThan(now) });
    await this.sessions.insert({
      tokenHash: hash(cookie),
      adminId,
      csrfToken,
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
    });
    return { cookie, csrfToken };
  }

  async find(cookie: string | undefined): Promise<DashboardSession | null> {
    if (!cookie || cookie.length > 100) return null;
    const session = await this.sessions.findOneBy({ tokenHash: hash(cookie) });
    if (!session || session.expiresAt <= Date.now()) return null;
    const admin = await this.admins.findById(session.adminId);
    if (!admin) return null;
    return {
      adminId: admin.id,
      email: admin.email,
      csrfToken: session.csrfToken,
      expiresAt: session.expiresAt,
    };
  }

  async end(cookie: string | undefined): Promise<void> {
    if (cookie) await this.sessions.delete({ tokenHash: hash(cookie) });
  }
}
