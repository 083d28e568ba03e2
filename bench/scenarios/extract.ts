/**
 * Extract: `extractWorkflow` over `--pages` small pages of the sample API (`/large/items`, generated on the fly) in
 * batch mode (default options: 50 pages per activity) and page mode (one activity per page), with `load: false`
 * (the CSVs are built, nothing is loaded, so the figure is about fetching and checkpointing), vs the plain loop
 * `runExtraction` with the real fetcher against the same API in this process. Order: baseline, then per mode
 * (ours, baseline) × repeat. Also: history events of every run of the continue-as-new chain, and the worker's RSS
 * over time (is it flat on a long run?). Both sides are warmed up first on a small API (untimed).
 */
import { parseExtractorConfig } from '../../src/extractor/config-schema';
import { createPageFetcher } from '../../src/extractor/http/fetch-page';
import { runExtraction } from '../../src/extractor/run-loop';
import { createSampleApi } from '../../src/sample-api';
import type { ExtractResult } from '../../src/workflows/extract-types';
import type { Scenario, ScenarioContext } from '../lib/context';
import { activityBreakdown, historyTimings, type HistoryTimings } from '../lib/history';
import { measure } from '../lib/measure';
import { kibToMb, rssTimeline, type RssSample } from '../lib/proc';
import { figure, type Figure } from '../lib/report';
import { median } from '../lib/stats';

export const extractScenario: Scenario = async (ctx) => {
  const { stack, options } = ctx;
  const pages = options.pages;
  const api = await createSampleApi({ largePages: pages, logRequests: false });
  try {
    const config = {
      parameters: {
        api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
        config: { outputBucket: 'bench-extract', jobs: [{ endpoint: 'large/items', dataField: 'items', dataType: 'items' }] },
      },
    };
    const parsed = parseExtractorConfig(config);
    const baselineRates: number[] = [];
    const runs: Array<Record<string, unknown>> = [];
    const baseline = async () => {
      const run = await measure(stack, () => runExtraction(parsed, { fetchPage: createPageFetcher(), keepRows: false, keepRequests: false }));
      if (run.value.pages !== pages) throw new Error(`plain loop extracted ${run.value.pages} pages, expected ${pages}`);
      const rate = pages / (run.ms / 1000);
      baselineRates.push(rate);
      runs.push({ side: 'baseline', ms: Math.round(run.ms), pagesPerSecond: rate, cpuSeconds: run.cpuSeconds, cpuSplit: run.cpuSplit });
      ctx.log(`baseline: plain loop, ${pages} pages in ${(run.ms / 1000).toFixed(1)} s = ${rate.toFixed(0)} pages/s, cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}`);
    };

    await warmUp(ctx);
    await baseline();
    const byMode: Record<string, Array<{ rate: number; maxEvents: number; runs: number; samples: RssSample[]; peakKiB: number }>> = {};
    for (let r = 0; r < options.repeat; r++) {
      for (const mode of options.extractModes) {
        ctx.log(`ours: extractWorkflow, ${mode} mode, ${pages} pages …`);
        const run = await measure(stack, () => ctx.runWorkflow<ExtractResult>('extractWorkflow', { config, options: { mode, load: false } }, `extract-${mode}`));
        const wf = run.value;
        if (wf.result.pages !== pages) throw new Error(`extractWorkflow (${mode}) extracted ${wf.result.pages} pages, expected ${pages}`);
        const rate = pages / (run.ms / 1000);
        const effectiveOptions = effectiveExtractOptions(mode);
        const chain = await historiesOfChain(ctx, wf.workflowId);
        const events = chain.map((t) => t.events);
        const fetches = activityBreakdown(chain, 'fetchPages');
        const build = activityBreakdown(chain, 'buildTableCsv');
        const breakdown = {
          fetchPages: fetches,
          buildTableCsvMs: build.runMs,
          fetchPagesShareOfWall: Math.round((fetches.runMs / run.ms) * 1000) / 1000,
          msPerPageInsideFetchPages: Math.round((fetches.runMs / pages) * 1000) / 1000,
          orchestrationMsPerActivity: fetches.count ? Math.round(((fetches.queueMs + fetches.gapMs) / fetches.count) * 10) / 10 : undefined,
        };
        const maxEvents = Math.max(...events);
        (byMode[mode] ??= []).push({ rate, maxEvents, runs: events.length, samples: run.worker.samples, peakKiB: run.worker.peakKiB });
        const timeline = rssTimeline(run.worker.samples, 10);
        runs.push({
          side: 'ours',
          mode,
          effectiveOptions,
          workflowId: wf.workflowId,
          ms: Math.round(run.ms),
          pagesPerSecond: rate,
          records: wf.result.records,
          runs: wf.result.runs,
          historyEventsPerRun: events,
          breakdown,
          firstFetches: chain[0]!.activities
            .filter((a) => a.type === 'fetchPages')
            .slice(0, 10)
            .map((a) => ({ queueMs: a.startedMs === undefined ? undefined : Math.round(a.startedMs - a.scheduledMs), runMs: a.endedMs === undefined || a.startedMs === undefined ? undefined : Math.round(a.endedMs - a.startedMs), attempt: a.attempt, outcome: a.outcome })),
          workerPeakMb: kibToMb(run.worker.peakKiB),
          workerRssTimelineMb: timeline,
          cpuSeconds: run.cpuSeconds,
        cpuSplit: run.cpuSplit,
        });
        ctx.log(
          `ours (${mode}): ${(run.ms / 1000).toFixed(1)} s = ${rate.toFixed(0)} pages/s; ${events.length} run(s), events per run ${summarize(events)}; ` +
            `worker RSS over time (MB, tenths) ${timeline.join(' ')}; cpu [user, sys] s ${JSON.stringify(run.cpuSplit)}; ` +
            `${fetches.count} fetchPages: inside ${(fetches.runMs / 1000).toFixed(1)} s (${breakdown.msPerPageInsideFetchPages} ms/page), ` +
            `queued ${(fetches.queueMs / 1000).toFixed(1)} s, between ${(fetches.gapMs / 1000).toFixed(1)} s; buildTableCsv ${(build.runMs / 1000).toFixed(1)} s`,
        );
        await baseline();
      }
    }

    const baseRate = median(baselineRates)!;
    const figures: Figure[] = [];
    for (const [mode, results] of Object.entries(byMode)) {
      const rate = median(results.map((x) => x.rate))!;
      const last = results.at(-1)!;
      const growth = rssGrowth(last.samples);
      figures.push(
        figure({
          scenario: 'extract',
          metric: `${mode} mode`,
          unit: 'pages/s',
          ours: rate,
          baseline: baseRate,
          target: mode === 'batch' ? { on: 'ratio', op: '>=', value: 0.7 } : undefined,
          note: `${pages} pages, load: false; baseline: plain loop`,
        }),
        figure({ scenario: 'extract', metric: `${mode} mode: history events per run (max)`, unit: 'events', ours: last.maxEvents, note: `${last.runs} run(s) in the continue-as-new chain` }),
        figure({
          scenario: 'extract',
          metric: `${mode} mode: worker RSS growth over the run`,
          unit: 'MB',
          ours: growth.growthMb,
          baseline: growth.earlyMb,
          note: `peak ${kibToMb(last.peakKiB)} MB; baseline: RSS in the 2nd tenth of the run`,
        }),
      );
    }
    return { figures, details: { pages, config, runs } };
  } finally {
    await api.close();
  }
};

/** The options the workflow resolved from ours (defaults included), as the sources read now; for the record. */
function effectiveExtractOptions(mode: 'batch' | 'page'): unknown {
  try {
    // read at run time: the defaults are tuned by the extract workflow's authors
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const plan = require('../../src/workflows/extract-plan') as { resolveExtractOptions?: (o: unknown) => { options: unknown } };
    return plan.resolveExtractOptions?.({ mode, load: false }).options;
  } catch (err) {
    return { unavailable: String(err) };
  }
}

/** Pages of the untimed warm-up run of each side (JIT, lazily loaded modules, first connections). */
export const WARM_UP_PAGES = 300;

/** Runs both sides once, untimed, against a small API, so that neither pays its cold start in the measured runs. */
async function warmUp(ctx: ScenarioContext): Promise<void> {
  const api = await createSampleApi({ largePages: WARM_UP_PAGES, logRequests: false });
  try {
    const config = {
      parameters: {
        api: { baseUrl: api.url, pagination: { method: 'response.param', responseParam: 'next_page', queryParam: 'page' } },
        config: { outputBucket: 'bench-warmup', jobs: [{ endpoint: 'large/items', dataField: 'items', dataType: 'items' }] },
      },
    };
    await runExtraction(parseExtractorConfig(config), { fetchPage: createPageFetcher(), keepRows: false, keepRequests: false });
    await ctx.runWorkflow<ExtractResult>('extractWorkflow', { config, options: { mode: 'batch', load: false } }, 'extract-warmup');
  } finally {
    await api.close();
  }
}

/** History timings of every run of the workflow's continue-as-new chain, oldest first. */
async function historiesOfChain(ctx: ScenarioContext, workflowId: string): Promise<HistoryTimings[]> {
  const runIds: Array<{ runId: string; startMs: number }> = [];
  for await (const execution of ctx.stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runIds.push({ runId: execution.runId, startMs: execution.startTime.getTime() });
  }
  runIds.sort((a, b) => a.startMs - b.startMs);
  const timings: HistoryTimings[] = [];
  for (const { runId } of runIds) {
    const history = await ctx.stack.client.workflow.getHandle(workflowId, runId).fetchHistory();
    timings.push(historyTimings(history.events ?? []));
  }
  return timings;
}

function summarize(values: number[]): string {
  if (values.length <= 6) return values.join(', ');
  return `${values.slice(0, 3).join(', ')}, …, ${values.slice(-2).join(', ')} (max ${Math.max(...values)})`;
}

/** RSS (MB) in the 2nd tenth of a run (after warm-up) and how much higher the last tenth went. */
export function rssGrowth(samples: readonly RssSample[]): { earlyMb: number; lateMb: number; growthMb: number } {
  const tenths = rssTimeline(samples, 10);
  if (tenths.length === 0) return { earlyMb: 0, lateMb: 0, growthMb: 0 };
  const earlyMb = tenths[1] ?? tenths[0]!;
  const lateMb = tenths.at(-1)!;
  return { earlyMb, lateMb, growthMb: lateMb - earlyMb };
}
