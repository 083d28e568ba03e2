import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadSettings } from '../../../src/config';

const read = (file: string) => readFileSync(join(__dirname, '..', '..', '..', file), 'utf8');

describe("the compose deployment's worker metrics", () => {
  it('has every worker serve metrics on the port Prometheus finds the worker replicas on', () => {
    const compose = parse(read('docker-compose.yml')) as { services: Record<string, { environment?: Record<string, string>; expose?: string[] }> };
    const worker = compose.services.worker!;
    const address = worker.environment!.SAPI_METRICS_ADDRESS!;
    expect(loadSettings({ SAPI_METRICS_ADDRESS: address }).observability.metricsAddress).toBe(address);
    const port = Number(address.split(':')[1]);
    expect(worker.expose).toContain(String(port));

    const prometheus = parse(read('deploy/prometheus.yml')) as { scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[] }[] };
    const job = prometheus.scrape_configs.find((j) => j.job_name === 'sapi-temporal-worker');
    expect(job?.dns_sd_configs).toEqual([expect.objectContaining({ names: ['worker'], port })]);
  });
});
