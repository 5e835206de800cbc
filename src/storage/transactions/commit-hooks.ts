import type { Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

const commitHooks = new WeakMap<EntityManager, Array<() => void>>();

/**
 * Runs `hook` once the transaction of `manager` has committed, and never if it rolls back (or if
 * the manager is not one of TransactionRunner's): for caches of what is known to be stored.
 */
export function afterCommit(manager: EntityManager, hook: () => void): void {
  commitHooks.get(manager)?.push(hook);
}

/** Collects the commit hooks of a unit that runs on `manager`. */
export function collectCommitHooks(manager: EntityManager): Array<() => void> {
  const hooks: Array<() => void> = [];
  commitHooks.set(manager, hooks);
  return hooks;
}

/** A hook that fails is logged: its unit is committed all the same, and the others run. */
export function runCommitHooks(logger: Logger, hooks: ReadonlyArray<() => void>): void {
  for (const hook of hooks) {
    try {
      hook();
    } catch (error) {
      logger.error(
        `A commit hook failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
}
