/**
 * Runs a Generic-Extractor documentation example (test/fixtures/ge-examples/<NNN-name>) with `runExtraction`
 * against its mock-API files, and reads the reference's output (`_sample_out/`) for comparison.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseExtractorConfig } from '../../../src/extractor/config-schema';
import { mappedPrimaryKeys } from '../../../src/extractor/mapping';
import { runExtraction, type ExtractionResult, type FetchedPage } from '../../../src/extractor/run-loop';
import type { ExtractorConfig, RequestDescriptor } from '../../../src/extractor/types';

export const EXAMPLES_DIR = join(__dirname, '../../fixtures/ge-examples');
const MOCK_ORIGIN = 'http://mock-server:80/';
const OUR_ORIGIN = 'http://mock-server/';

/** A table as CSV gives it: header and rows (values in column order). */
export interface CsvTable {
  columns: string[];
  rows: string[][];
}

/** RFC 4180 CSV → rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Storage-safe comparison of column names: `-` → `_`. */
export const storageSafe = (name: string) => name.replace(/-/g, '_');

/** The reference's tables of an example: table name → columns, rows, manifest. */
export function expectedTables(example: string): Record<string, CsvTable & { primaryKey: string[]; incremental: boolean }> {
  const dir = join(EXAMPLES_DIR, example, '_sample_out');
  const tables: Record<string, CsvTable & { primaryKey: string[]; incremental: boolean }> = {};
  for (const file of readdirSync(dir).filter((f) => !f.endsWith('.manifest'))) {
    const [columns, ...rows] = parseCsv(readFileSync(join(dir, file), 'utf8'));
    const manifest = JSON.parse(readFileSync(join(dir, `${file}.manifest`), 'utf8')) as { primary_key?: string[]; incremental: boolean };
    const name = file.slice(file.indexOf('.') + 1);
    tables[name] = { columns: columns.map(storageSafe), rows, primaryKey: (manifest.primary_key ?? []).map(storageSafe), incremental: manifest.incremental };
  }
  return tables;
}

interface MockFile {
  method: string;
  uri: string;
  body: string;
  response: string;
}

function mockFiles(): MockFile[] {
  const files: MockFile[] = [];
  for (const folder of readdirSync(EXAMPLES_DIR)) {
    const dir = join(EXAMPLES_DIR, folder);
    if (!existsSync(join(dir, 'config.json'))) continue;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.request'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      const [line, ...rest] = text.split('\n');
      const [method, uri] = line.trim().split(' ');
      const response = readFileSync(join(dir, file.replace(/\.request$/, '.response')), 'utf8');
      files.push({ method, uri, body: rest.join('\n').trim(), response });
    }
  }
  return files;
}

/** The fetcher of the mock server: answers the response of the `.request` file matching method, URI and body. */
export function mockFetch() {
  const files = mockFiles();
  return async (request: RequestDescriptor): Promise<FetchedPage> => {
    const url = new URL(request.url);
    const uri = `${url.pathname}${url.search}`;
    const body = request.body ? (request.body.kind === 'json' ? JSON.stringify(request.body.value) : request.body.value) : '';
    const match = files.find((f) => f.method === request.method && f.uri === uri && (f.body === '' || f.body === body));
    if (!match) throw new Error(`mock server: no response for ${request.method} ${uri} ${body}`);
    return { body: JSON.parse(match.response), bytes: Buffer.byteLength(match.response), hash: createHash('sha256').update(match.response).digest('hex') };
  };
}

/** The example's configuration (its base URL moved to the mock's origin), parsed. */
export function exampleConfig(example: string, file = 'config.json'): ExtractorConfig {
  const text = readFileSync(join(EXAMPLES_DIR, example, file), 'utf8').split(MOCK_ORIGIN).join(OUR_ORIGIN);
  return parseExtractorConfig(JSON.parse(text));
}

/** Our tables of an example, in the shape of `expectedTables` (primary keys from the mappings). */
export async function extractExample(example: string): Promise<{ result: ExtractionResult; tables: ReturnType<typeof expectedTables> }> {
  const config = exampleConfig(example);
  const result = await runExtraction(config, { fetchPage: mockFetch() });
  const keys = mappedPrimaryKeys(config);
  const tables: ReturnType<typeof expectedTables> = {};
  for (const [name, table] of Object.entries(result.tables)) {
    tables[name] = {
      columns: table.columns.map(storageSafe),
      rows: table.rows.map((row) => table.columns.map((c) => row[c])),
      primaryKey: (keys[name] ?? []).map(storageSafe),
      incremental: false,
    };
  }
  return { result, tables };
}
