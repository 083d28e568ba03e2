/**
 * A streaming `multipart/form-data` encoder: text fields plus one file part whose content is a stream, so an
 * upload through the importer never holds the file in memory. When the file size is known the body has a
 * `content-length`; otherwise it is sent chunked.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

interface MultipartFile {
  /** Form field name (`data` for the importer). */
  field: string;
  filename: string;
  contentType?: string;
  /** Bytes of the content, when known (enables `content-length`). */
  size?: number;
  content: Readable;
}

interface MultipartBody {
  body: Readable;
  headers: Record<string, string>;
}

/** Text fields: arrays are sent as repeated `name[]` fields. */
type MultipartFields = Record<string, string | number | boolean | readonly string[] | undefined>;

export function encodeMultipart(fields: MultipartFields, file: MultipartFile): MultipartBody {
  const boundary = `----sapi-temporal-${randomBytes(12).toString('hex')}`;
  const head: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const values = Array.isArray(value)
      ? value.map((v) => [`${name}[]`, v] as const)
      : [[name, typeof value === 'boolean' ? (value ? '1' : '0') : String(value)] as const];
    for (const [n, v] of values) {
      head.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(n)}"\r\n\r\n${v}\r\n`));
    }
  }
  head.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${escapeQuoted(file.field)}"; filename="${escapeQuoted(file.filename)}"\r\n` +
        `Content-Type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const prefix = Buffer.concat(head);

  async function* generate(): AsyncGenerator<Buffer> {
    yield prefix;
    for await (const chunk of file.content) yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    yield tail;
  }

  const headers: Record<string, string> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
  if (file.size !== undefined) headers['content-length'] = String(prefix.length + file.size + tail.length);
  return { body: Readable.from(generate(), { objectMode: false }), headers };
}

function escapeQuoted(s: string): string {
  return s.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
}
