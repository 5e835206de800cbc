import { PassThrough, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { limitBytes } from './byte-limit';

const errors = {
  tooLarge: () => new Error('too large'),
  cutOff: () => new Error('cut off'),
};

async function readAll(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += (chunk as Buffer).toString('utf8');
  return text;
}

/** A source fed by hand, as an HTTP request's body arrives. */
const source = () => new PassThrough();

describe('limitBytes', () => {
  it('passes every byte through, in order, when the source stays within the limit', async () => {
    const input = source();
    const limited = limitBytes(input, 10, errors);
    input.write('abc');
    input.write('defg');
    input.end('hij');
    expect(await readAll(limited)).toBe('abcdefghij');
  });

  it('counts bytes, not characters', async () => {
    const input = source();
    const limited = limitBytes(input, 5, errors);
    input.end('ééé'); // 6 bytes
    await expect(readAll(limited)).rejects.toThrow('too large');
  });

  it('fails with tooLarge one byte past the limit, leaving the source whole and drained', async () => {
    const input = source();
    const limited = limitBytes(input, 10, errors);
    const reading = readAll(limited);
    input.write('0123456789');
    input.write('X');
    await expect(reading).rejects.toThrow('too large');
    // The rest is still read (and dropped): the request can end and its socket answer.
    input.end('more after the limit');
    // Rejects (premature close) had the source been destroyed before its end.
    await finished(input, { writable: false });
    expect(input.readableEnded).toBe(true);
  });

  it('fails with cutOff when the source closes before its end', async () => {
    const input = source();
    const limited = limitBytes(input, 100, errors);
    const reading = readAll(limited);
    input.write('partial');
    input.destroy();
    await expect(reading).rejects.toThrow('cut off');
  });

  it('fails with cutOff on an error of the source, and survives a later one', async () => {
    const input = source();
    const limited = limitBytes(input, 100, errors);
    const reading = readAll(limited);
    input.emit('error', new Error('ECONNRESET'));
    await expect(reading).rejects.toThrow('cut off');
    expect(() => input.emit('error', new Error('again'))).not.toThrow();
  });

  it('lets the source go on to its end when the reader gives up early', async () => {
    const input = source();
    const limited = limitBytes(input, 10_000_000, errors);
    // More than the reader takes at once: the source is paused when it gives up.
    for (let i = 0; i < 8; i++) input.write(Buffer.alloc(64 * 1024, 'a'));
    for await (const _chunk of limited) break; // destroys `limited`
    input.end('the rest\n');
    await finished(input, { writable: false });
    expect(input.readableEnded).toBe(true);
  });

  it('fails at once on a source that has already ended', async () => {
    const input = Readable.from([]);
    await readAll(input);
    await expect(readAll(limitBytes(input, 10, errors))).rejects.toThrow('cut off');
  });

  it('pauses the source while the reader is behind', async () => {
    const input = source();
    const limited = limitBytes(input, 10_000_000, errors);
    const chunk = Buffer.alloc(64 * 1024, 'a');
    for (let i = 0; i < 8; i++) input.write(chunk);
    await sleep(10);
    expect(input.isPaused()).toBe(true);
    input.end();
    expect((await readAll(limited)).length).toBe(8 * chunk.length);
  });
});
