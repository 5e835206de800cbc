import { ErrorCode } from '../../../common/errors/error-code';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import {
  MAX_UPLOAD_BYTES,
  MAX_UPLOAD_LINES,
  normaliseUpload,
  parseUploadLines,
  uploadLineKey,
} from './points-upload-parser';

const SPACE = 7;
const defaults = { spaceId: SPACE, reason: null };

const read = (content: string, reason: string | null = null) =>
  parseUploadLines(normaliseUpload(content, SPACE), { ...defaults, reason });

const refusalOf = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    if (error instanceof LoyaltyException) return { code: error.code, message: error.message };
    throw error;
  }
  return null;
};

describe('points uploads, as read', () => {
  it('reads CSV with a header, quoted fields, its own reasons and times, and the reason for all; no time is none', () => {
    const parsed = read(
      [
        'Address, Points, reason, occurredAt',
        '0xA11CE,25,Community call host,2026-01-05T10:00:00Z',
        '"0xB0B",-5,"Duplicate claim, refunded",',
        '0xCAFE,+7,,',
      ].join('\n'),
      'Spring campaign',
    );
    expect(parsed.refused).toEqual([]);
    expect(parsed.lines).toEqual([
      {
        line: 2,
        address: '0xA11CE',
        points: 25,
        reason: 'Community call host',
        occurredAt: Date.UTC(2026, 0, 5, 10),
      },
      {
        line: 3,
        address: '0xB0B',
        points: -5,
        reason: 'Duplicate claim, refunded',
        occurredAt: null,
      },
      { line: 4, address: '0xCAFE', points: 7, reason: 'Spring campaign', occurredAt: null },
    ]);
  });

  it('refuses each bad line with its number and why, and reads the others', () => {
    const parsed = read(
      [
        'address,points,reason',
        '0xA11CE,25,ok',
        '',
        '0x a,5,spaces',
        '0xB0B,0,nothing',
        '0xB0B,1.5,half',
        '0xB0B,5',
        '0xB0B,5,',
        '0xB0B,2000000000,too many',
        '"0xB0B,5,open quote',
        '0xB0B,5,' + 'x'.repeat(201),
      ].join('\n'),
    );
    expect(parsed.lines.map((line) => line.line)).toEqual([2]);
    expect(parsed.refused).toEqual([
      { line: 4, message: 'address must be printable ASCII without spaces' },
      { line: 5, message: 'points must not be 0' },
      { line: 6, message: 'points must be a whole number, such as 25 or -10' },
      { line: 7, message: 'has 2 fields; the header names 3' },
      { line: 8, message: 'reason is required: give one on the line or for the whole upload' },
      { line: 9, message: 'points must be from -1000000000 to 1000000000' },
      { line: 10, message: 'a quoted field is not closed on its line' },
      { line: 11, message: 'reason must be at most 200 characters' },
    ]);
  });

  it('reads NDJSON objects with the same fields', () => {
    const parsed = read(
      [
        '{"address":"0xA11CE","points":25,"reason":"host"}',
        '{"address":"0xB0B","points":"-5","occurredAt":"2026-01-05T10:00:00+01:00"}',
        '{"address":"0xB0B","points":5,"key":"mine"}',
        '[1,2]',
        'not json',
        '{"address":"0xB0B","points":5,"occurredAt":"yesterday"}',
      ].join('\r\n'),
      'batch',
    );
    expect(parsed.lines).toEqual([
      { line: 1, address: '0xA11CE', points: 25, reason: 'host', occurredAt: null },
      {
        line: 2,
        address: '0xB0B',
        points: -5,
        reason: 'batch',
        occurredAt: Date.UTC(2026, 0, 5, 9),
      },
    ]);
    expect(parsed.refused).toEqual([
      {
        line: 3,
        message: 'unknown field "key": the fields are address, points, reason and occurredAt',
      },
      { line: 4, message: 'must be a JSON object such as {"address":"0x…","points":25}' },
      { line: 5, message: 'is not valid JSON' },
      {
        line: 6,
        message:
          'occurredAt must be an ISO 8601 date-time with an offset, e.g. 2026-01-31T12:00:00Z',
      },
    ]);
  });

  it('leaves the time of a line with a blank or null occurredAt to the apply, and checks one given', () => {
    const parsed = read(
      [
        '{"address":"0xA","points":1,"occurredAt":null}',
        '{"address":"0xB","points":2,"occurredAt":"  "}',
        '{"address":"0xC","points":3,"occurredAt":"2026-01-31T12:00:00Z"}',
        '{"address":"0xD","points":4,"occurredAt":"1970-01-01"}',
      ].join('\n'),
      'r',
    );
    expect(parsed.lines.map(({ line, occurredAt }) => ({ line, occurredAt }))).toEqual([
      { line: 1, occurredAt: null },
      { line: 2, occurredAt: null },
      { line: 3, occurredAt: Date.UTC(2026, 0, 31, 12) },
    ]);
    expect(parsed.refused.map((refused) => refused.line)).toEqual([4]);
  });

  it('gives the same file the same keys in a space, whatever its line ends, and others elsewhere', () => {
    const lf = normaliseUpload('address,points\n0xA,1\n0xB,2\n', SPACE);
    const crlf = normaliseUpload('\uFEFFaddress,points\r\n0xA,1  \r\n0xB,2\r\n\r\n', SPACE);
    expect(crlf.sha256).toBe(lf.sha256);
    expect(crlf.text).toBe(lf.text);
    expect(normaliseUpload('address,points\n0xA,1\n0xB,3\n', SPACE).sha256).not.toBe(lf.sha256);
    expect(normaliseUpload('address,points\n0xA,1\n0xB,2\n', SPACE + 1).sha256).not.toBe(lf.sha256);
    expect(uploadLineKey(lf.sha256, 3)).toBe(`upload:${lf.sha256.slice(0, 32)}:3`);
    expect(lf).toMatchObject({ format: 'csv', lineCount: 2, headerLine: 1 });
  });

  it('refuses the whole upload when it is empty, too large, or its header cannot be read', () => {
    const invalid = (message: string) => ({ code: ErrorCode.INVALID_ARGUMENT, message });
    expect(refusalOf(() => normaliseUpload(' \n\n', SPACE))).toEqual(
      invalid('Paste some lines or choose a file: the upload is empty'),
    );
    expect(refusalOf(() => normaliseUpload('address,points\n', SPACE))).toEqual(
      invalid('The upload has a header line but no lines of points'),
    );
    expect(refusalOf(() => normaliseUpload('\naddress,points,bonus\n0xA,1,2', SPACE))).toEqual(
      invalid(
        'Line 2, the header: unknown column "bonus": the columns are address, points, reason and occurredAt',
      ),
    );
    expect(refusalOf(() => normaliseUpload('address;points\n0xA;1', SPACE))).toEqual(
      invalid('Line 1, the header: separate the columns with commas (address,points)'),
    );
    expect(refusalOf(() => normaliseUpload('address,reason\n0xA,r', SPACE))?.message).toMatch(
      /name the columns address and points/,
    );
    expect(refusalOf(() => normaliseUpload('address,points,Points\n0xA,1,1', SPACE))).toEqual(
      invalid('Line 1, the header: column "points" appears twice'),
    );

    const big =
      'address,points\n' + '0x0123456789abcdef0123456789abcdef01234567,1\n'.repeat(240_000);
    expect(Buffer.byteLength(big)).toBeGreaterThan(MAX_UPLOAD_BYTES);
    expect(refusalOf(() => normaliseUpload(big, SPACE))).toEqual({
      code: ErrorCode.REQUEST_TOO_LARGE,
      message:
        'The upload is 10.3 MB: at most 10 MB (10,485,760 bytes) a file. Split it into smaller files',
    });
    const many = 'address,points\n' + '0xA,1\n'.repeat(MAX_UPLOAD_LINES + 1);
    expect(refusalOf(() => normaliseUpload(many, SPACE))).toEqual({
      code: ErrorCode.REQUEST_TOO_LARGE,
      message: 'The upload has 100,001 lines: at most 100,000 a file. Split it into smaller files',
    });
    expect(
      normaliseUpload('address,points\n' + '0xA,1\n'.repeat(MAX_UPLOAD_LINES), SPACE).lineCount,
    ).toBe(MAX_UPLOAD_LINES);
  });
});
