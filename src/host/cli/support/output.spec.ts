import { createRequire } from 'node:module';
import { DriverPackageNotInstalledError } from 'typeorm';
import { missingPackageOf } from './output';

/** The error Node's own `require` (not jest's) throws for `specifier`. */
function requireFailure(specifier: string): unknown {
  try {
    createRequire(__filename)(specifier);
  } catch (error) {
    return error;
  }
  throw new Error(`${specifier} loaded`);
}

describe('missingPackageOf', () => {
  it('names the package a bare require could not find, subpaths and scopes included', () => {
    expect(missingPackageOf(requireFailure('no-such-package-for-loyalty'))).toBe(
      'no-such-package-for-loyalty',
    );
    expect(missingPackageOf(requireFailure('@no-such-scope/loyalty/deep/path'))).toBe(
      '@no-such-scope/loyalty',
    );
  });

  it("names the driver TypeORM could not load, as TypeORM's own advice does", () => {
    expect(missingPackageOf(new DriverPackageNotInstalledError('Mysql', 'mysql2'))).toBe('mysql2');
  });

  it('leaves our own missing files and every other failure alone', () => {
    expect(missingPackageOf(requireFailure('./no-such-file-of-ours'))).toBeUndefined();
    expect(missingPackageOf(new Error("Cannot find module 'x'"))).toBeUndefined();
    expect(missingPackageOf('mysql2')).toBeUndefined();
  });
});
