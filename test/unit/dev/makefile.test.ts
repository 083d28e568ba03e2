import { execFileSync } from 'node:child_process';
import { repoRoot } from '../../harness/processes';

/** The commands `make <target>` would run from scratch (`-n -B`: every step printed, none run). */
function plannedCommands(target: string, variables: string[] = []): string[] {
  return execFileSync('make', ['-n', '-B', target, ...variables], { cwd: repoRoot, encoding: 'utf8' }).trim().split('\n');
}

describe('the Makefile', () => {
  it('makes the demo install only what it runs: npm packages from the lock as is, the Temporal CLI and MinIO', () => {
    const commands = plannedCommands('demo');
    expect(commands.filter((command) => /\bnpm\b|install-tools/.test(command)).map((command) => command.trim())).toEqual([
      'npm ci --no-audit --no-fund',
      'bash scripts/install-tools.sh temporal minio',
    ]);
  });

  it("adds the storage emulator of the demo's backend, and nothing else", () => {
    expect(plannedCommands('demo', ['BACKEND=azure'])).toContain('bash scripts/install-tools.sh temporal minio azurite');
    expect(plannedCommands('demo', ['BACKEND=gcp'])).toContain('bash scripts/install-tools.sh temporal minio fake-gcs');
  });

  it('makes the tests install every tool', () => {
    expect(plannedCommands('test')).toContain('bash scripts/install-tools.sh');
  });
});
