import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The version of the installed package: `version` of the nearest `package.json` above `src/` or `lib/`
 * (whatever the package's layout), `unknown` when there is none.
 */
export function packageVersion(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const { version } = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
      return typeof version === 'string' ? version : 'unknown';
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
