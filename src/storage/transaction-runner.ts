import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { dialectOf } from './sql-dialect';

const RETRYABLE_MYSQL_ERRORS = new Set([
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_DUP_ENTRY',
]);
const MAX_ATTEMPTS = 5;

/**
 * Runs write transactions. On SQLite the one connection can hold one transaction at a time, so
 * writers queue here instead of interleaving. On MySQL a deadlock, or a duplicate key raced in by a
 * concurrent writer, rolls the whole unit back and runs it again: the unit re-reads what it needs,
 * so the retry sees the other writer's committed rows.
 */
@Injectable()
export class TransactionRunner {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (dialectOf(this.dataSource) === 'sqlite') {
      const next = this.queue.then(() => this.dataSource.transaction(work));
      this.queue = next.catch(() => undefined);
      return next;
    }
    return this.runWithRetry(work);
  }

  private async runWithRetry<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dataSource.transaction(work);
      } catch (error) {
        const code =
          (error as { code?: string; driverError?: { code?: string } }).driverError?.code ??
          (error as { code?: string }).code;
        if (attempt >= MAX_ATTEMPTS || !code || !RETRYABLE_MYSQL_ERRORS.has(code)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 5 * attempt + Math.random() * 20));
      }
    }
  }
}
