import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { Utf8Check, firstInvalidUtf8Offset, incompleteTailStart } from '../../../src/emulator/jobs/utf8-check';

/** Streams `chunks` through the check; resolves with what came out or rejects with the check's error. */
async function run(chunks: Buffer[]): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(chunks, { objectMode: false }),
    new Utf8Check('file 7'),
    new Writable({
      write(chunk: Buffer, _enc, done) {
        out.push(chunk);
        done();
      },
    }),
  );
  return Buffer.concat(out);
}

/** Every way of cutting `buf` in two. */
const splits = (buf: Buffer): Buffer[][] => Array.from({ length: buf.length + 1 }, (_, i) => [buf.subarray(0, i), buf.subarray(i)]);

describe('UTF-8 check of imported CSV', () => {
  const valid = Buffer.from('id,name\n1,Příliš žluťoučký\n2,日本語\n3,emoji 😀\n', 'utf8');

  test('valid UTF-8 passes through unchanged however the chunks cut its multi-byte characters', async () => {
    for (const parts of splits(valid)) expect(await run(parts)).toEqual(valid);
    expect(await run([...valid].map((b) => Buffer.from([b])))).toEqual(valid);
  });

  test('an invalid byte fails with the line it is on', async () => {
    const bad = Buffer.concat([Buffer.from('id,name\n1,ok\n2,caf'), Buffer.from([0xe9]), Buffer.from(',x\n')]);
    for (const parts of splits(bad)) {
      await expect(run(parts)).rejects.toThrow('file 7 is not valid UTF-8: Invalid UTF-8 byte sequence on line 3 (byte 0xe9)');
    }
  });

  test('a multi-byte sequence truncated at the end of the content fails', async () => {
    const truncated = Buffer.concat([Buffer.from('a\n'), Buffer.from('😀', 'utf8').subarray(0, 2)]);
    await expect(run([truncated])).rejects.toThrow(/Invalid UTF-8 byte sequence on line 2/);
  });

  test('overlong encodings, surrogates and code points past U+10FFFF are invalid', () => {
    expect(firstInvalidUtf8Offset(Buffer.from([0x41, 0xc0, 0x80]))).toBe(1);
    expect(firstInvalidUtf8Offset(Buffer.from([0x41, 0xe0, 0x80, 0x80]))).toBe(1);
    expect(firstInvalidUtf8Offset(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(firstInvalidUtf8Offset(Buffer.from([0xf4, 0x90, 0x80, 0x80]))).toBe(0);
    expect(firstInvalidUtf8Offset(Buffer.from([0x41, 0x42, 0xe2, 0x82, 0x41]))).toBe(2);
    expect(firstInvalidUtf8Offset(valid)).toBe(-1);
  });

  test('only a sequence cut by the end of a chunk is carried over', () => {
    const euro = Buffer.from('€', 'utf8');
    expect(incompleteTailStart(Buffer.from('ab'))).toBe(2);
    expect(incompleteTailStart(Buffer.concat([Buffer.from('ab'), euro]))).toBe(5);
    expect(incompleteTailStart(Buffer.concat([Buffer.from('ab'), euro.subarray(0, 2)]))).toBe(2);
    expect(incompleteTailStart(Buffer.from([0x61, 0xff]))).toBe(2);
  });
});
