/**
 * The manifest of a sliced file (`<prefix>manifest`: `{"entries":[{"url":…,"mandatory":true}, …]}`), read through
 * an {@link ObjectReader} of any store, and the header line of headerless sliced CSV exports.
 */
import { type Readable } from 'node:stream';
import { excerptOf, SapiErrorCode, SapiTransferError } from '../errors';
import { manifestSchema } from '../storage-api/schemas';
import { type ObjectReader } from './object-store';

/** Reads and validates the manifest of a sliced file through `reader`; returns the slice URLs in order. */
export async function readManifest(reader: ObjectReader, signal?: AbortSignal): Promise<string[]> {
  const label = reader.label;
  const { body } = await reader.get(0, signal);
  const text = await streamToString(body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SapiTransferError({
      code: SapiErrorCode.DOWNLOAD_FAILED,
      message: `manifest is not JSON: ${JSON.stringify(excerptOf(text))}`,
      context: { manifest: label },
      retryable: false,
    });
  }
  const result = manifestSchema.safeParse(parsed);
  if (!result.success) {
    throw new SapiTransferError({
      code: SapiErrorCode.DOWNLOAD_FAILED,
      message: `manifest has an unexpected shape (${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')})`,
      context: { manifest: label },
      retryable: false,
    });
  }
  return result.data.entries.map((e) => e.url);
}

/** `"a","b"\n`: RFC 4180 with every name enclosed, like the service's exports. */
export function headerLine(columns: readonly string[]): string {
  return `${columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(',')}\n`;
}

async function streamToString(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
