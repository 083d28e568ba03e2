import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { chunkParts, fileParts, PartBufferPool, runPartPipeline } from '../../../src/object-storage/part-pipeline';
import { bufferSource, openSource } from '../../../src/object-storage/sources';

describe('fileParts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'file-parts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const collect = async (parts: AsyncIterable<Buffer>) => {
    const out: string[] = [];
    for await (const part of parts) out.push(part.toString('latin1')); // copied: the buffers are reused
    return out;
  };

  it.each([
    ['an empty file', 0, 0],
    ['a file of whole parts', 30, 0],
    ['a file with a short last part', 27, 0],
    ['the rest of a file from a part boundary (a resume)', 27, 10],
  ])('reads %s into the same parts a stream of it is cut into', async (_name, size, start) => {
    const data = Buffer.from(Array.from({ length: size }, (_, i) => 97 + (i % 26)));
    const path = join(dir, `f-${size}-${start}`);
    writeFileSync(path, data);
    const file = await open(path, 'r');
    try {
      const fromFile = await collect(fileParts(file, start, new PartBufferPool(10)));
      const fromStream = await collect(chunkParts(Readable.from([data.subarray(start)]), 10));
      expect(fromFile).toEqual(fromStream);
      expect(fromFile.join('')).toBe(data.subarray(start).toString('latin1'));
    } finally {
      await file.close();
    }
  });

  it('reads a source smaller than a part into a buffer of its size, not a whole part (V8 counts the whole buffer)', async () => {
    const partSize = 1024 * 1024;
    const data = Buffer.alloc(50_000, 7);
    const path = join(dir, 'small');
    writeFileSync(path, data);
    const file = await open(path, 'r');
    try {
      const pool = new PartBufferPool(partSize, data.length);
      const parts: Buffer[] = [];
      for await (const part of fileParts(file, 0, pool)) parts.push(part);
      expect(parts).toHaveLength(1);
      expect(parts[0]!.equals(data)).toBe(true);
      expect(parts[0]!.buffer.byteLength).toBeLessThanOrEqual(data.length + 1); // was the whole 1 MiB part
    } finally {
      await file.close();
    }
  });

  it.each([
    ['grew within a part', 4, 9],
    ['grew past a part', 4, 27],
    ['is as announced', 27, 27],
    ['shrank', 27, 5],
  ])('cuts the same parts when the source %s as a stream of it is cut into', async (_name, expected, size) => {
    const data = Buffer.from(Array.from({ length: size }, (_, i) => 97 + (i % 26)));
    const path = join(dir, `g-${expected}-${size}`);
    writeFileSync(path, data);
    const file = await open(path, 'r');
    try {
      const fromFile = await collect(fileParts(file, 0, new PartBufferPool(10, expected)));
      const fromStream = await collect(chunkParts(Readable.from([data.subarray(0, 3), data.subarray(3)]), 10, new PartBufferPool(10, expected)));
      const plain = await collect(chunkParts(Readable.from([data]), 10));
      expect(fromFile).toEqual(plain);
      expect(fromStream).toEqual(plain);
    } finally {
      await file.close();
    }
  });

  it.each([
    ['whole parts', 64 * 1024, 3 * 64 * 1024, undefined],
    ['parts with a short last one', 64 * 1024, 5 * 64 * 1024 + 17, undefined],
    ['an empty file', 64 * 1024, 0, undefined],
    ['a file smaller than a part (its own small buffer)', 64 * 1024, 1000, undefined],
    ['a file that grew past the size it announced (its first part read in two)', 64 * 1024, 2 * 64 * 1024 + 5, 1000],
  ])(
    'hands each part its CRC32, computed as the file is read (%s), the same as of the part and of a stream of it',
    async (_name, partSize, size, announced) => {
      const data = randomBytes(size);
      const path = join(dir, `crc-${partSize}-${size}`);
      writeFileSync(path, data);
      const seen = async (source: Awaited<ReturnType<typeof openSource>>) => {
        const parts: { bytes: number; crc: number | undefined; crcOfBytes: number }[] = [];
        await runPartPipeline({
          source,
          partSize,
          concurrency: 2,
          crc32: true,
          context: {},
          part: (_index, part, _final, crc) => void parts.push({ bytes: part.length, crc, crcOfBytes: crc32(part) }),
        });
        return parts;
      };
      const fromFile = await seen({ ...(await openSource(path)), ...(announced === undefined ? {} : { size: announced }) });
      const fromStream = await seen(bufferSource(data));
      expect(fromFile.length).toBe(Math.max(1, Math.ceil(size / partSize)));
      for (const p of fromFile) expect(p.crc).toBe(p.crcOfBytes);
      expect(fromFile).toEqual(fromStream);
    },
  );
});
