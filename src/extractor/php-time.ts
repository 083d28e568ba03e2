/**
 * PHP's `date()` and `strtotime()` for user functions, in UTC (the reference runs with PHP's default time zone, UTC).
 * Pure module: calendar arithmetic by hand (no `Date` object, no clock; "now" is passed in), so workflows can use it.
 *
 * `strtotime` understands what configurations use: `now`, `today`/`midnight`/`noon`, `tomorrow`, `yesterday`,
 * `@<seconds>`, dates `YYYY-MM-DD` / `YYYY/MM/DD` / `MM/DD/YYYY` with an optional time `HH:MM[:SS[.frac]]` (after a space
 * or `T`) and zone (`Z`, `UTC`, `±HH[:]MM`), and relative parts `[+-]N unit` (sec, min, hour, day, week, fortnight,
 * month, year, weekday(s); plural and short forms), `next`/`last <unit>`, `… ago`, weekday names (`monday`, `next
 * friday`, `last sun`: time of day reset), `first day of` / `last day of` (with `next month` …), in any combination.
 * Anything else gives `false`, as PHP does for strings it cannot parse.
 */

const DAY_S = 86_400;
const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** Days since 1970-01-01 of a proleptic Gregorian date (month 1–12; out-of-range months/days overflow like PHP). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y0 = year + Math.floor((month - 1) / 12);
  const m0 = ((((month - 1) % 12) + 12) % 12) + 1;
  const y = m0 <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (m0 + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + 1 - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468 + (day - 1);
}

/** The civil date of a day number (inverse of {@link daysFromCivil}). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday. */
  weekday: number;
  /** Day of the year, 0-based. */
  yday: number;
}

function partsOf(seconds: number): Parts {
  const days = Math.floor(seconds / DAY_S);
  const rest = seconds - days * DAY_S;
  const { year, month, day } = civilFromDays(days);
  return {
    year,
    month,
    day,
    hour: Math.floor(rest / 3600),
    minute: Math.floor((rest % 3600) / 60),
    second: Math.floor(rest % 60),
    weekday: (((days + 4) % 7) + 7) % 7,
    yday: days - daysFromCivil(year, 1, 1),
  };
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number) => daysFromCivil(y, m + 1, 1) - daysFromCivil(y, m, 1);
const pad = (n: number, width = 2) => (n < 0 ? '-' : '') + String(Math.abs(n)).padStart(width, '0');

/** ISO-8601 week number and week-based year. */
function isoWeek(p: Parts): { week: number; year: number } {
  const days = daysFromCivil(p.year, p.month, p.day);
  const isoDay = p.weekday === 0 ? 7 : p.weekday;
  const thursday = days - isoDay + 4;
  const year = civilFromDays(thursday).year;
  return { week: Math.floor((thursday - daysFromCivil(year, 1, 1)) / 7) + 1, year };
}

function suffix(day: number): string {
  if (day >= 11 && day <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][day % 10] ?? 'th';
}

/** PHP's `date(format, timestamp)` in UTC (`timestamp` in seconds). `\` escapes the next character. */
export function phpDate(format: string, timestamp: number): string {
  const ts = Math.floor(timestamp);
  const p = partsOf(ts);
  const hour12 = p.hour % 12 === 0 ? 12 : p.hour % 12;
  let out = '';
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    switch (c) {
      case 'd':
        out += pad(p.day);
        break;
      case 'D':
        out += DAY_NAMES[p.weekday]!.slice(0, 3);
        break;
      case 'j':
        out += String(p.day);
        break;
      case 'l':
        out += DAY_NAMES[p.weekday]!;
        break;
      case 'N':
        out += String(p.weekday === 0 ? 7 : p.weekday);
        break;
      case 'S':
        out += suffix(p.day);
        break;
      case 'w':
        out += String(p.weekday);
        break;
      case 'z':
        out += String(p.yday);
        break;
      case 'W':
        out += pad(isoWeek(p).week);
        break;
      case 'F':
        out += MONTH_NAMES[p.month - 1]!;
        break;
      case 'm':
        out += pad(p.month);
        break;
      case 'M':
        out += MONTH_NAMES[p.month - 1]!.slice(0, 3);
        break;
      case 'n':
        out += String(p.month);
        break;
      case 't':
        out += String(daysInMonth(p.year, p.month));
        break;
      case 'L':
        out += isLeap(p.year) ? '1' : '0';
        break;
      case 'o':
        out += String(isoWeek(p).year);
        break;
      case 'X':
      case 'x':
      case 'Y':
        out += p.year < 0 ? `-${pad(-p.year, 4)}` : pad(p.year, 4);
        break;
      case 'y':
        out += pad(p.year % 100);
        break;
      case 'a':
        out += p.hour < 12 ? 'am' : 'pm';
        break;
      case 'A':
        out += p.hour < 12 ? 'AM' : 'PM';
        break;
      case 'B':
        out += pad(Math.floor(((((ts + 3600) % DAY_S) + DAY_S) % DAY_S) / 86.4), 3);
        break;
      case 'g':
        out += String(hour12);
        break;
      case 'G':
        out += String(p.hour);
        break;
      case 'h':
        out += pad(hour12);
        break;
      case 'H':
        out += pad(p.hour);
        break;
      case 'i':
        out += pad(p.minute);
        break;
      case 's':
        out += pad(p.second);
        break;
      case 'u':
        out += '000000';
        break;
      case 'v':
        out += '000';
        break;
      case 'e':
        out += 'UTC';
        break;
      case 'I':
        out += '0';
        break;
      case 'O':
        out += '+0000';
        break;
      case 'P':
        out += '+00:00';
        break;
      case 'p':
        out += 'Z';
        break;
      case 'T':
        out += 'UTC';
        break;
      case 'Z':
        out += '0';
        break;
      case 'c':
        out += phpDate('Y-m-d\\TH:i:sP', ts);
        break;
      case 'r':
        out += phpDate('D, d M Y H:i:s O', ts);
        break;
      case 'U':
        out += String(ts);
        break;
      case '\\':
        i++;
        if (i < format.length) out += format[i];
        break;
      default:
        out += c;
    }
  }
  return out;
}

const UNIT_SECONDS: Record<string, number> = { sec: 1, second: 1, min: 60, minute: 60, hour: 3600, day: DAY_S, week: 7 * DAY_S, fortnight: 14 * DAY_S };

function unitOf(word: string): string | null {
  const w = word.toLowerCase().replace(/s$/, '');
  if (w === 'sec' || w === 'second') return 'sec';
  if (w === 'min' || w === 'minute') return 'min';
  if (w === 'hour') return 'hour';
  if (w === 'day') return 'day';
  if (w === 'week') return 'week';
  if (w === 'fortnight' || w === 'forthnight') return 'fortnight';
  if (w === 'month') return 'month';
  if (w === 'year') return 'year';
  if (w === 'weekday') return 'weekday';
  return null;
}

interface Relative {
  seconds: number;
  months: number;
  weekdays: number;
}

function zoneOffsetSeconds(zone: string | undefined): number {
  if (!zone || /^(z|utc|gmt)$/i.test(zone)) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!m) return 0;
  const sign = m[1] === '-' ? -1 : 1;
  return sign * (Number(m[2]) * 3600 + Number(m[3] ?? 0) * 60);
}

/**
 * PHP's `strtotime(text, base)` in UTC: seconds since the epoch, or `false` when the text is not understood.
 * `baseSeconds` is "now" (relative parts and a date without time build on it).
 */
export function phpStrtotime(text: string, baseSeconds: number): number | false {
  let rest = text.trim().toLowerCase();
  if (rest === '') return false;
  const at = /^@(-?\d+)$/.exec(rest);
  if (at) return Number(at[1]);

  let days = Math.floor(baseSeconds / DAY_S);
  let timeOfDay = baseSeconds - days * DAY_S;
  let zone = 0;
  const rel: Relative = { seconds: 0, months: 0, weekdays: 0 };
  let dayOf: 'first' | 'last' | null = null;
  let weekday: { day: number; mode: 'next' | 'last' | 'this' } | null = null;
  let matchedSomething = false;
  const take = (re: RegExp): RegExpExecArray | null => {
    const m = re.exec(rest);
    if (!m) return null;
    rest = rest.slice(m[0].length).trimStart();
    matchedSomething = true;
    return m;
  };

  while (rest !== '') {
    let m: RegExpExecArray | null;
    if ((m = take(/^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?=$|[\st])/))) {
      days = daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
      timeOfDay = 0;
      if (rest.startsWith('t')) rest = rest.slice(1);
    } else if ((m = take(/^(\d{1,2})\/(\d{1,2})\/(\d{4})(?=$|\s)/))) {
      days = daysFromCivil(Number(m[3]), Number(m[1]), Number(m[2]));
      timeOfDay = 0;
    } else if ((m = take(/^(\d{1,2})-(\d{1,2})-(\d{4})(?=$|\s)/))) {
      days = daysFromCivil(Number(m[3]), Number(m[2]), Number(m[1]));
      timeOfDay = 0;
    } else if ((m = take(/^(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:\s*(z|utc|gmt|[+-]\d{2}:?\d{2}))?(?=$|\s)/))) {
      timeOfDay = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0);
      zone = zoneOffsetSeconds(m[4]);
    } else if ((m = take(/^(z|utc|gmt)(?=$|\s)/))) {
      zone = 0;
    } else if (take(/^now(?=$|\s)/)) {
      // nothing: the base
    } else if (take(/^(today|midnight)(?=$|\s)/)) {
      timeOfDay = 0;
    } else if (take(/^noon(?=$|\s)/)) {
      timeOfDay = 12 * 3600;
    } else if (take(/^tomorrow(?=$|\s)/)) {
      days += 1;
      timeOfDay = 0;
    } else if (take(/^yesterday(?=$|\s)/)) {
      days -= 1;
      timeOfDay = 0;
    } else if ((m = take(/^(first|last) day of(?=$|\s)/))) {
      dayOf = m[1] as 'first' | 'last';
    } else if ((m = take(new RegExp(`^(?:(next|last|previous|this)\\s+)?(${WEEKDAY_PATTERN})(?=$|\\s)`)))) {
      weekday = { day: weekdayIndex(m[2]!), mode: m[1] === 'next' ? 'next' : m[1] === 'last' || m[1] === 'previous' ? 'last' : 'this' };
      timeOfDay = 0;
    } else if ((m = take(/^([+-]?)\s*(\d+)\s*([a-z]+)(?=$|\s|[+-])/))) {
      const unit = unitOf(m[3]!);
      if (!unit) return false;
      addRelative(rel, unit, (m[1] === '-' ? -1 : 1) * Number(m[2]));
    } else if ((m = take(/^(next|last|previous|this)\s+([a-z]+)(?=$|\s)/))) {
      const unit = unitOf(m[2]!);
      if (!unit) return false;
      addRelative(rel, unit, m[1] === 'next' ? 1 : m[1] === 'this' ? 0 : -1);
    } else if (take(/^ago(?=$|\s)/)) {
      rel.seconds = -rel.seconds;
      rel.months = -rel.months;
      rel.weekdays = -rel.weekdays;
    } else {
      return false;
    }
  }
  if (!matchedSomething) return false;

  if (rel.months !== 0 || dayOf) {
    const c = civilFromDays(days);
    const day = dayOf === 'first' ? 1 : dayOf === 'last' ? 0 : c.day;
    days = daysFromCivil(c.year, c.month + rel.months + (dayOf === 'last' ? 1 : 0), day === 0 ? 1 : day) - (day === 0 ? 1 : 0);
  }
  days += weekdayDays(days, rel.weekdays);
  if (weekday) {
    const current = (((days + 4) % 7) + 7) % 7;
    let delta = (weekday.day - current + 7) % 7;
    if (weekday.mode === 'next' && delta === 0) delta = 7;
    if (weekday.mode === 'last') delta = delta === 0 ? -7 : delta - 7;
    days += delta;
  }
  return days * DAY_S + timeOfDay - zone + rel.seconds;
}

const WEEKDAY_PATTERN = 'sunday|monday|tuesday|wednesday|thursday|friday|saturday|sun|mon|tue|tues|wed|thu|thur|thurs|fri|sat';

/** 0 = Sunday. */
function weekdayIndex(name: string): number {
  return ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'].indexOf(name.slice(0, 3));
}

function addRelative(rel: Relative, unit: string, amount: number): void {
  if (unit === 'month') rel.months += amount;
  else if (unit === 'year') rel.months += 12 * amount;
  else if (unit === 'weekday') rel.weekdays += amount;
  else rel.seconds += amount * (UNIT_SECONDS[unit] ?? 0);
}

/** Calendar days to move `count` business days (Mon–Fri) from day number `days`. */
function weekdayDays(days: number, count: number): number {
  let moved = 0;
  let d = days;
  const step = count < 0 ? -1 : 1;
  for (let left = Math.abs(count); left > 0;) {
    d += step;
    moved += step;
    const wd = (((d + 4) % 7) + 7) % 7;
    if (wd !== 0 && wd !== 6) left--;
  }
  return moved;
}
