/**
 * The bulk path's view of a CSV: a byte-level check that a file stays inside a strict subset of RFC 4180 on which
 * the emulator's reference parser (csv-parse, as `loadCsvIntoStaging` configures it) and DuckDB's `read_csv` (with
 * the options of {@link readCsvSql}) read the same records and values. Anything outside the subset is *refused*
 * (not rejected): the caller then loads the file with the reference parser, which accepts it or names the error.
 *
 * The subset: one-byte delimiter and enclosure (escape = enclosure), records ended by `\n`, no `\r` and no NUL byte
 * anywhere, no empty line, an enclosure only at the start of a field (then closed and followed by the delimiter or
 * the end of the record), every record with the expected number of values.
 */

/** Why the bulk path refused a file; the reference parser loads it instead. */
export class BulkRefused extends Error {
  override readonly name = 'BulkRefused';
}

const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;

/** The bytes of a dialect the bulk path can read, or undefined when the dialect is outside its subset. */
export interface BulkDialect {
  delimiter: number;
  quote: number;
}

/** The dialect as single ASCII bytes, when the bulk path can read it. */
export function bulkDialect(d: { delimiter: string; enclosure: string; escapedBy: string; ignoredLinesCount: number }): BulkDialect | undefined {
  const single = (s: string): number | undefined => (s.length === 1 && s.charCodeAt(0) < 0x80 ? s.charCodeAt(0) : undefined);
  const delimiter = single(d.delimiter);
  const quote = single(d.enclosure);
  if (delimiter === undefined || quote === undefined || delimiter === quote) return undefined;
  if ([LF, CR, NUL].includes(delimiter) || [LF, CR, NUL].includes(quote)) return undefined;
  if (d.escapedBy !== '' && d.escapedBy !== d.enclosure) return undefined;
  if (d.ignoredLinesCount !== 0) return undefined;
  return { delimiter, quote };
}

const enum State {
  RecordStart,
  FieldStart,
  Unquoted,
  Quoted,
  /** An enclosure inside a quoted field: closes it, or starts a doubled one. */
  QuoteInQuoted,
}

/**
 * Streams bytes through the subset check, counting records and their values. `push` each chunk in order, then
 * `end()`; both throw {@link BulkRefused} on the first byte outside the subset.
 */
export class CsvShapeCheck {
  private state = State.RecordStart;
  private fields = 0;
  /** Records seen so far. */
  records = 0;

  constructor(
    private readonly dialect: BulkDialect,
    /** Values every record must have. */
    private readonly expected: number,
  ) {}

  push(buf: Uint8Array, from = 0): void {
    if (buf.indexOf(CR, from) !== -1) throw new BulkRefused('a carriage return (\\r) in the file');
    if (buf.indexOf(NUL, from) !== -1) throw new BulkRefused('a NUL byte in the file');
    const { delimiter, quote } = this.dialect;
    const n = buf.length;
    let state = this.state;
    let fields = this.fields;
    let i = from;
    while (i < n) {
      if (state === State.Quoted) {
        const at = buf.indexOf(quote, i);
        if (at === -1) {
          i = n;
          break;
        }
        i = at + 1;
        state = State.QuoteInQuoted;
        continue;
      }
      if (state === State.Unquoted) {
        let b = buf[i]!;
        while (b !== delimiter && b !== LF && b !== quote) {
          if (++i === n) break;
          b = buf[i]!;
        }
        if (i === n) break;
        if (b === quote) throw new BulkRefused('an enclosure inside an unquoted value');
      }
      const b = buf[i++]!;
      if (state === State.QuoteInQuoted) {
        if (b === quote) {
          state = State.Quoted;
          continue;
        }
        if (b !== delimiter && b !== LF) throw new BulkRefused('a value after the closing enclosure');
      } else if (state !== State.Unquoted) {
        // RecordStart or FieldStart
        if (b === quote) {
          state = State.Quoted;
          continue;
        }
        if (b === LF && state === State.RecordStart) throw new BulkRefused('an empty line');
        if (b !== delimiter && b !== LF) {
          state = State.Unquoted;
          continue;
        }
      }
      // b ends a value: the delimiter, or the end of the record
      fields += 1;
      if (b === delimiter) {
        state = State.FieldStart;
      } else {
        this.endRecord(fields);
        fields = 0;
        state = State.RecordStart;
      }
    }
    this.state = state;
    this.fields = fields;
  }

  /** The end of the content: a last record without a newline counts; an open enclosure is refused. */
  end(): void {
    if (this.state === State.Quoted) throw new BulkRefused('an enclosure still open at the end of the file');
    if (this.state !== State.RecordStart) this.endRecord(this.fields + 1);
    this.state = State.RecordStart;
    this.fields = 0;
  }

  /** True between records (the content so far ends with a complete record). */
  get atRecordStart(): boolean {
    return this.state === State.RecordStart;
  }

  private endRecord(values: number): void {
    if (values !== this.expected) throw new BulkRefused(`a record with ${values} values, expected ${this.expected}`);
    this.records += 1;
  }
}

/**
 * The first record of `buf` when it is complete (ends with `\n`, or `final` and the content ends): its values and
 * the offset after it; undefined when more bytes are needed. Throws {@link BulkRefused} outside the subset.
 */
export function firstRecord(buf: Buffer, dialect: BulkDialect, final: boolean): { values: string[]; end: number } | undefined {
  if (buf.indexOf(CR) !== -1) throw new BulkRefused('a carriage return (\\r) in the file');
  if (buf.indexOf(NUL) !== -1) throw new BulkRefused('a NUL byte in the file');
  const { delimiter, quote } = dialect;
  const values: string[] = [];
  let i = 0;
  if (buf[0] === LF) throw new BulkRefused('an empty line');
  for (;;) {
    if (i === buf.length) {
      if (!final) return undefined;
      values.push('');
      return { values, end: i };
    }
    let value: string;
    if (buf[i] === quote) {
      const parts: string[] = [];
      let from = i + 1;
      for (;;) {
        const at = buf.indexOf(quote, from);
        if (at === -1) {
          if (final) throw new BulkRefused('an enclosure still open at the end of the file');
          return undefined;
        }
        parts.push(buf.toString('utf8', from, at));
        if (at + 1 === buf.length && !final) return undefined;
        if (buf[at + 1] === quote) {
          parts.push(String.fromCharCode(quote));
          from = at + 2;
          continue;
        }
        i = at + 1;
        break;
      }
      value = parts.join('');
      if (i < buf.length && buf[i] !== delimiter && buf[i] !== LF) throw new BulkRefused('a value after the closing enclosure');
    } else {
      let j = i;
      while (j < buf.length && buf[j] !== delimiter && buf[j] !== LF) {
        if (buf[j] === quote) throw new BulkRefused('an enclosure inside an unquoted value');
        j++;
      }
      value = buf.toString('utf8', i, j);
      i = j;
    }
    values.push(value);
    if (i === buf.length) {
      if (!final) return undefined;
      return { values, end: i };
    }
    if (buf[i] === LF) return { values, end: i + 1 };
    i += 1; // the delimiter
  }
}

/** A single-quoted SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/**
 * `read_csv` of a headerless file checked by {@link CsvShapeCheck}, with no guessing: `count` VARCHAR columns `c0…`,
 * the dialect as given, strict. Empty values come back NULL (quoted or not: `allow_quoted_nulls` only keeps a quoted
 * one from matching the null string), so the caller maps NULL to ''.
 */
export function readCsvSql(path: string, dialect: BulkDialect, count: number): string {
  const columns = Array.from({ length: count }, (_, i) => `'c${i}': 'VARCHAR'`).join(', ');
  const quote = sqlString(String.fromCharCode(dialect.quote));
  return (
    `read_csv(${sqlString(path)}, header = false, auto_detect = false, columns = {${columns}}, ` +
    `delim = ${sqlString(String.fromCharCode(dialect.delimiter))}, quote = ${quote}, escape = ${quote}, new_line = '\\n', ` +
    `strict_mode = true, allow_quoted_nulls = false, null_padding = false)`
  );
}
