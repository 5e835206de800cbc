import { PassThrough, Readable } from 'node:stream';

export interface ByteLimitErrors {
  /** More than the limit arrived. */
  tooLarge: () => Error;
  /** The source closed or failed before its end (a client gone mid-body). */
  cutOff: () => Error;
}

/**
 * The bytes of `source`, failing with `errors.tooLarge()` once more than `maxBytes` came. Unlike
 * pipe() or pipeline(), it never destroys `source`: that is an HTTP request whose socket must
 * still carry the answer. Once the limit is passed or the reader destroys the result, the rest of
 * `source` is read and dropped, so the connection stays usable.
 */
export function limitBytes(source: Readable, maxBytes: number, errors: ByteLimitErrors): Readable {
  const out = new PassThrough();
  if (source.readableEnded || source.destroyed) {
    out.destroy(errors.cutOff());
    return out;
  }
  let bytes = 0;
  let attached = true;
  const detach = () => {
    if (!attached) return;
    attached = false;
    source.off('data', onData).off('end', onEnd).off('close', onCutOff);
    out.off('drain', onDrain).off('close', detach);
    source.resume();
  };
  const onData = (chunk: Buffer | string) => {
    bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (bytes > maxBytes) {
      detach();
      out.destroy(errors.tooLarge());
    } else if (!out.write(chunk)) {
      source.pause();
    }
  };
  const onDrain = () => source.resume();
  const onEnd = () => {
    detach();
    out.end();
  };
  // An error, or 'close' before 'end' (an aborted request). The error listener stays: a source
  // that fails after we let go of it must not take the process down.
  const onCutOff = () => {
    if (!attached) return;
    detach();
    out.destroy(errors.cutOff());
  };
  source.on('data', onData).once('end', onEnd).on('error', onCutOff).once('close', onCutOff);
  out.on('drain', onDrain).once('close', detach);
  return out;
}
