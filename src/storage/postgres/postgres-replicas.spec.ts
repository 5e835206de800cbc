import { lastRecordEnd } from './postgres-replicas';

const PAGE = 8192;
const SEGMENT = 16 * 1024 * 1024;

describe("the primary's position for its standbys", () => {
  it('is the insert location itself within a page', () => {
    expect(lastRecordEnd('0/3431F98', PAGE, SEGMENT)).toBe('0/3431F98');
    expect(lastRecordEnd('1A/FF000128', PAGE, SEGMENT)).toBe('1A/FF000128');
  });

  it("is the page boundary when the location lies just past a page's header", () => {
    // Seen on a caught-up standby: replay stops at ...2000 while the insert location is ...2018.
    expect(lastRecordEnd('0/3432018', PAGE, SEGMENT)).toBe('0/3432000');
    // A segment opens with the long header.
    expect(lastRecordEnd('0/4000028', PAGE, SEGMENT)).toBe('0/4000000');
    expect(lastRecordEnd('2/28', PAGE, SEGMENT)).toBe('2/0');
  });
});
