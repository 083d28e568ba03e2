/**
 * MD5 of a string's UTF-8 bytes, as lowercase hex, in plain TypeScript (no `node:crypto`, so workflow code and
 * pure modules can use it). Used for deterministic link ids and long-name shortening, never for security.
 */

const S = [
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16,
  23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];
const K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) >>> 0);

/** The UTF-8 bytes of `text` followed by MD5 padding (0x80, zeros, the bit length): a whole number of blocks. */
function paddedUtf8(text: string): Uint8Array {
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) length += 1;
    else if (c < 0x800) length += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      length += 4;
      i++;
    } else length += 3; // other BMP characters, and lone surrogates (U+FFFD, as TextEncoder does)
  }
  const bytes = new Uint8Array((((length + 8) >> 6) + 1) * 64);
  let j = 0;
  for (let i = 0; i < text.length; i++) {
    let cp = text.charCodeAt(i);
    if (cp < 0x80) {
      bytes[j++] = cp;
      continue;
    }
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      cp = 0x10000 + ((cp - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
    } else if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x800) {
      bytes[j++] = 0xc0 | (cp >> 6);
      bytes[j++] = 0x80 | (cp & 63);
    } else if (cp < 0x10000) {
      bytes[j++] = 0xe0 | (cp >> 12);
      bytes[j++] = 0x80 | ((cp >> 6) & 63);
      bytes[j++] = 0x80 | (cp & 63);
    } else {
      bytes[j++] = 0xf0 | (cp >> 18);
      bytes[j++] = 0x80 | ((cp >> 12) & 63);
      bytes[j++] = 0x80 | ((cp >> 6) & 63);
      bytes[j++] = 0x80 | (cp & 63);
    }
  }
  bytes[j] = 0x80;
  const bitLength = length * 8;
  const end = bytes.length - 8;
  for (let i = 0; i < 8; i++) bytes[end + i] = i < 4 ? (bitLength >>> (8 * i)) & 0xff : Math.floor(bitLength / 2 ** (8 * i)) & 0xff;
  return bytes;
}

/** Lowercase hex MD5 of `text` (UTF-8). */
export function md5Hex(text: string): string {
  const bytes = paddedUtf8(text);

  let a0 = 0x67452301;
  let b0 = 0xefcdab89;
  let c0 = 0x98badcfe;
  let d0 = 0x10325476;
  const m = new Array<number>(16);
  for (let offset = 0; offset < bytes.length; offset += 64) {
    for (let i = 0; i < 16; i++) {
      const j = offset + i * 4;
      m[i] = (bytes[j] | (bytes[j + 1] << 8) | (bytes[j + 2] << 16) | (bytes[j + 3] << 24)) >>> 0;
    }
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) % 16;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) % 16;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) % 16;
      }
      const sum = (a + f + K[i] + m[g]) >>> 0;
      a = d;
      d = c;
      c = b;
      b = (b + ((sum << S[i]) | (sum >>> (32 - S[i])))) >>> 0;
    }
    a0 = (a0 + a) >>> 0;
    b0 = (b0 + b) >>> 0;
    c0 = (c0 + c) >>> 0;
    d0 = (d0 + d) >>> 0;
  }
  return [a0, b0, c0, d0].map((word) => [0, 8, 16, 24].map((shift) => ((word >>> shift) & 0xff).toString(16).padStart(2, '0')).join('')).join('');
}
