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

const lastUnits = new WeakSet<EntityManager>();

/**
 * Makes the unit of `manager` the last of its transaction where units share one (SQLite's group
 * commit): the transaction commits right after it, and units queued behind it go to the next one.
 * For a commit hook that must see the database exactly as this unit left it.
 */
export function commitRightAfter(manager: EntityManager): void {
  lastUnits.add(manager);
}

/** Whether the unit of `manager` asked to be the last of its transaction. */
export function commitsRightAfter(manager: EntityManager): boolean {
  return lastUnits.has(manager);
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
