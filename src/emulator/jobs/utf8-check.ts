import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';
import { JobError } from '../errors';

const NEWLINE = 0x0a;

/** Expected length of a UTF-8 sequence from its lead byte; 0 when the byte cannot start one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/**
 * Where a multi-byte sequence cut by the end of `buf` starts, or `buf.length` when the buffer does not end inside
 * one. Only the last three bytes can hold such a start; anything invalid is left to the validator.
 */
export function incompleteTailStart(buf: Uint8Array): number {
  const end = buf.length;
  for (let i = end - 1; i >= 0 && i >= end - 3; i--) {
    const byte = buf[i]!;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte: keep looking for its lead
    const length = sequenceLength(byte);
    return length > 1 && i + length > end ? i : end;
  }
  return end;
}

/** Offset where the first sequence that breaks UTF-8 starts (RFC 3629: no overlongs, no surrogates, nothing past U+10FFFF), or -1. */
export function firstInvalidUtf8Offset(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    const lead = buf[i]!;
    const length = sequenceLength(lead);
    if (length === 0) return i;
    if (length === 1) {
      i += 1;
      continue;
    }
    // Second-byte ranges that rule out overlongs (E0, F0), surrogates (ED) and code points above U+10FFFF (F4).
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k < length; k++) {
      const byte = buf[i + k];
      if (byte === undefined || (k === 1 ? byte < low || byte > high : (byte & 0xc0) !== 0x80)) return i;
    }
    i += length;
  }
  return -1;
}

function countNewlines(buf: Buffer, end = buf.length): number {
  let count = 0;
  for (let i = buf.indexOf(NEWLINE); i !== -1 && i < end; i = buf.indexOf(NEWLINE, i + 1)) count += 1;
  return count;
}

/**
 * A pass-through stream that fails with a {@link JobError} naming the line of the first byte that is not UTF-8,
 * like the real service, which rejects such files instead of storing U+FFFD. Validation is native (`isUtf8`) on each
 * chunk as it flows; a sequence cut by a chunk boundary is carried over to the next chunk, so nothing is decoded and
 * nothing is read twice.
 */
export class Utf8Check extends Transform {
  private carry: Buffer | undefined;
  /** Newlines already passed on, for the line number in the error. */
  private lines = 0;

  constructor(private readonly label: string) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    const cut = incompleteTailStart(buf);
    const whole = cut === buf.length ? buf : buf.subarray(0, cut);
    if (!isUtf8(whole)) {
      done(this.invalid(whole, firstInvalidUtf8Offset(whole)));
      return;
    }
    this.carry = cut === buf.length ? undefined : Buffer.from(buf.subarray(cut));
    this.lines += countNewlines(whole);
    done(null, whole);
  }

  override _flush(done: TransformCallback): void {
    // A sequence still open at the end of the content is truncated.
    if (this.carry) done(this.invalid(this.carry, 0));
    else done();
  }

  private invalid(buf: Buffer, offset: number): JobError {
    const at = Math.max(offset, 0);
    const line = this.lines + countNewlines(buf, at) + 1;
    const byte = buf[at];
    const shown = byte === undefined ? '' : ` (byte 0x${byte.toString(16).padStart(2, '0')})`;
    return new JobError(
      'storage.tables.invalidEncoding',
      `${this.label} is not valid UTF-8: Invalid UTF-8 byte sequence on line ${line}${shown}; the service accepts UTF-8 CSV only, convert the file first (e.g. iconv -f latin1 -t utf-8)`,
    );
  }
}
