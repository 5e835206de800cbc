import type { ValueTransformer } from 'typeorm';

/**
 * mysql2 as TypeORM configures it by default (bigNumberStrings) and node-postgres return BIGINT as
 * a string; every value we keep in one fits a JS number.
 */
export const asNumber: ValueTransformer = {
  to: (value: unknown) => value,
  from: (value: unknown) => (value === null || value === undefined ? value : Number(value)),
};
