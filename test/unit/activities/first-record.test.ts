import { firstRecordBytes } from '../../../src/activities/inspect-source';

const text = (b: Buffer) => b.toString('utf8');

describe("the bytes that hold a CSV's header record", () => {
  it('end at the first line feed: the rest of a small file is neither decoded nor parsed', () => {
    const file = Buffer.from(`id,name\r\n${'1,a\n'.repeat(10_000)}`);
    expect(text(firstRecordBytes(file, '"'))).toBe('id,name\r\n');
  });

  it('go on past line feeds inside an enclosed field, doubled enclosures included', () => {
    expect(text(firstRecordBytes(Buffer.from('"id","the\nname","a ""b""\nc"\n1,2,3\n'), '"'))).toBe('"id","the\nname","a ""b""\nc"\n');
    expect(text(firstRecordBytes(Buffer.from("'a\nb',c\n1,2\n"), "'"))).toBe("'a\nb',c\n");
  });

  it('are the whole probe when the header does not end in it, the first line is blank, or the enclosure is unusual', () => {
    const unclosed = Buffer.from('"id,name\n1,2\n');
    expect(firstRecordBytes(unclosed, '"')).toBe(unclosed);
    const blank = Buffer.from(' \r\nid\n');
    expect(firstRecordBytes(blank, '"')).toBe(blank);
    const noNewline = Buffer.from('id,name');
    expect(firstRecordBytes(noNewline, '"')).toBe(noNewline);
    const wide = Buffer.from('«a\nb»\n');
    expect(firstRecordBytes(wide, '«')).toBe(wide);
  });

  it('ignore quotes when fields are not enclosed (an escape character instead)', () => {
    expect(text(firstRecordBytes(Buffer.from('a"b,c\n1,2\n'), false))).toBe('a"b,c\n');
  });
});
