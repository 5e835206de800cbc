import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { Repository } from 'typeorm';
import { AdminEntity } from './admin.entity';
import { UNKNOWN_USER_HASH, hashPassword, verifyPassword } from './password-hasher';

export const MIN_PASSWORD_LENGTH = 12;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;

export class AdminInputError extends Error {}

@Injectable()
export class AdminsService {
  constructor(@InjectRepository(AdminEntity) private readonly admins: Repository<AdminEntity>) {}

  async create(email: string, password: string): Promise<{ id: string; email: string }> {
    const normalized = email.trim().toLowerCase();
    if (!EMAIL.test(normalized)) throw new AdminInputError(`"${email}" is not an email address`);
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw new AdminInputError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    if (await this.admins.exists({ where: { email: normalized } })) {
      throw new AdminInputError(`An admin with the email ${normalized} exists already`);
    }
    const admin = Object.assign(new AdminEntity(), {
      id: randomUUID(),
      email: normalized,
      passwordHash: await hashPassword(password),
      createdAt: Date.now(),
    });
    await this.admins.insert(admin);
    return { id: admin.id, email: admin.email };
  }

  /** The admin when email and password match; null otherwise, unknown and wrong alike. */
  async verify(email: string, password: string): Promise<AdminEntity | null> {
    const admin = await this.admins.findOneBy({ email: email.trim().toLowerCase() });
    const matches = await verifyPassword(
      password,
      admin?.passwordHash ?? (await UNKNOWN_USER_HASH),
    );
    return admin && matches ? admin : null;
  }

  findById(id: string): Promise<AdminEntity | null> {
    return this.admins.findOneBy({ id });
  }
}
