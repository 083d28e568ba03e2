// The Kubernetes example (deploy/kubernetes/worker.yaml) read as the cluster would get it, without a cluster: the
// manifests' shape, every setting the worker reads defined and understood by it, probes that run the image's own
// health check, a grace period longer than the worker's drain, memory sized from what the settings let it hold.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { loadSettings } from '../../../src/config';
import { WORKER_STOP_GRACE_MS } from '../../../src/worker';

const root = join(__dirname, '..', '..', '..');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  spec?: {
    replicas?: number;
    selector?: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        terminationGracePeriodSeconds?: number;
        restartPolicy?: string;
        containers: Array<{
          image: string;
          args?: string[];
          envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
          resources?: { requests?: { memory?: string }; limits?: { memory?: string } };
          startupProbe?: { exec?: { command: string[] } };
          livenessProbe?: { exec?: { command: string[] } };
        }>;
      };
    };
  };
}

const manifests = parseAllDocuments(readFileSync(join(root, 'deploy/kubernetes/worker.yaml'), 'utf8')).map((d) => d.toJS() as Manifest);
const byKind = (kind: string) => manifests.find((m) => m.kind === kind)!;
const mib = (quantity: string) => {
  const m = /^(\d+)(Mi|Gi)$/.exec(quantity);
  if (!m) throw new Error(`unexpected quantity ${quantity}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
};

describe('the Kubernetes example of a worker', () => {
  const config = byKind('ConfigMap');
  const secret = byKind('Secret');
  const deployment = byKind('Deployment');
  const pod = deployment.spec!.template.spec;
  const worker = pod.containers[0]!;

  it('is a ConfigMap, a Secret and a Deployment whose selector matches its pods', () => {
    expect(manifests.map((m) => `${m.apiVersion} ${m.kind}`)).toEqual(['v1 ConfigMap', 'v1 Secret', 'apps/v1 Deployment']);
    expect(deployment.spec!.template.metadata.labels).toMatchObject(deployment.spec!.selector!.matchLabels);
    expect(deployment.spec!.replicas).toBeGreaterThanOrEqual(2);
    expect(worker.args).toEqual(['worker']);
  });

  it('gives the worker settings it accepts, its secrets from the Secret only', () => {
    expect(worker.envFrom).toEqual([{ configMapRef: { name: config.metadata.name } }, { secretRef: { name: secret.metadata.name } }]);
    const env = { ...config.data, ...secret.stringData } as Record<string, string>;
    expect(Object.keys(secret.stringData!)).toEqual(expect.arrayContaining(['SAPI_TOKEN']));
    expect(Object.keys(config.data!).filter((k) => /TOKEN|SECRET|KEY/.test(k))).toEqual([]);
    const settings = loadSettings(env);
    expect(settings.temporal.taskQueue).toBe('sapi-temporal');
    expect(settings.observability.metricsAddress).toBe('0.0.0.0:9464');
  });

  it("probes the pod with the image's health check, stops it after the worker's drain, and restarts it", () => {
    for (const probe of [worker.startupProbe, worker.livenessProbe]) expect(probe?.exec?.command).toEqual(['node', '/app/deploy/worker-healthcheck.js']);
    expect(pod.terminationGracePeriodSeconds! * 1000).toBeGreaterThan(WORKER_STOP_GRACE_MS);
    expect(pod.restartPolicy).toBe('Always');
  });

  it('limits memory above the idle worker plus the transfer buffers its settings allow', () => {
    const settings = loadSettings({ ...config.data, SAPI_TOKEN: 'x' } as Record<string, string>);
    const idleMib = 245; // the highest idle RSS docs/deploying.md reports
    const buffersMib = settings.worker.maxConcurrentActivities * Number(config.data!.SAPI_PART_SIZE_MIB) * (Number(config.data!.SAPI_TRANSFER_CONCURRENCY) + 1);
    expect(mib(worker.resources!.limits!.memory!)).toBeGreaterThanOrEqual(idleMib + buffersMib);
    expect(mib(worker.resources!.requests!.memory!)).toBeGreaterThanOrEqual(idleMib);
  });
});
