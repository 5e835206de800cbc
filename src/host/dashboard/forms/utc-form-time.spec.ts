import { parseUtcInput, utcInputStep, utcInputValue, utcText } from './utc-form-time';

describe('UTC form times', () => {
  it('reads what a datetime-local input sends as UTC, whatever the zone of the server', () => {
    expect(parseUtcInput('2026-01-31T12:00')).toEqual({
      iso: '2026-01-31T12:00:00.000Z',
      ms: Date.UTC(2026, 0, 31, 12),
    });
    expect(parseUtcInput(' 2026-01-31 12:00:30 ')?.ms).toBe(Date.UTC(2026, 0, 31, 12, 0, 30));
    expect(parseUtcInput('2026-01-31T12:00:30.250Z')?.ms).toBe(
      Date.UTC(2026, 0, 31, 12, 0, 30, 250),
    );
  });

  it('refuses what is no date and time', () => {
    for (const value of ['', '2026-01-31', '2026-02-30T12:00', '2026-01-31T24:00', '12:00', 'x'])
      expect({ value, parsed: parseUtcInput(value) }).toEqual({ value, parsed: null });
    // An offset other than Z would be another zone: the form is UTC only.
    expect(parseUtcInput('2026-01-31T12:00+02:00')).toBeNull();
  });

  it('shows a stored time back as the input takes it, to the millisecond', () => {
    for (const ms of [
      Date.UTC(2026, 0, 31, 12),
      Date.UTC(2026, 0, 31, 12, 0, 30),
      Date.UTC(2026, 0, 31, 12, 0, 0, 5),
    ])
      expect(parseUtcInput(utcInputValue(ms))?.ms).toBe(ms);
    expect(utcInputValue(Date.UTC(2026, 0, 31, 12))).toBe('2026-01-31T12:00');
    expect(utcInputValue(Date.UTC(2026, 0, 31, 12, 0, 30))).toBe('2026-01-31T12:00:30');
    expect(utcInputStep(utcInputValue(Date.UTC(2026, 0, 31, 12, 0, 0, 5)))).toBe('0.001');
    expect(utcInputStep('2026-01-31T12:00:30')).toBe('1');
    expect(utcInputStep('2026-01-31T12:00')).toBe('60');
    expect(utcInputStep('')).toBe('60');
    expect(utcText(Date.UTC(2026, 0, 31, 12))).toBe('2026-01-31 12:00 UTC');
  });
});
