import { resolve } from 'node:path';
import { alternation, DEFAULT_SIZE_MIB, parseBenchArgs, SCENARIOS } from '../../../bench/lib/args';

describe('bench command line', () => {
  it('runs every scenario at 1 GiB when given nothing', () => {
    const options = parseBenchArgs([]);
    expect(options.scenarios).toEqual([...SCENARIOS]);
    expect(options.sizeMiB).toBe(DEFAULT_SIZE_MIB);
    expect(options.emulatorSizeMiB).toBe(DEFAULT_SIZE_MIB);
    expect(options.extractModes).toEqual(['batch', 'page']);
    expect(options.durationsS).toEqual([2, 10, 30]);
    expect(options.repeat).toBe(1);
  });

  it('selects scenarios by name in the canonical order and takes the knobs', () => {
    const options = parseBenchArgs(['download', 'upload', '--size-mib', '64', '--durations', '2,5', '--repeat', '2', '--keep']);
    expect(options.scenarios).toEqual(['upload', 'download']);
    expect(options.sizeMiB).toBe(64);
    expect(options.durationsS).toEqual([2, 5]);
    expect(options.repeat).toBe(2);
    expect(options.keep).toBe(true);
    expect(options.linkMBps).toBeUndefined();
    expect(parseBenchArgs(['download', '--link-mbps', '20', '--profile-dir', '/tmp/p']).linkMBps).toBe(20);
  });

  it('takes the worker counts of the scale-out batches, one worker by default', () => {
    expect(parseBenchArgs(['concurrency']).workers).toEqual([1]);
    expect(parseBenchArgs(['concurrency', '--workers', '1, 2,4']).workers).toEqual([1, 2, 4]);
    expect(() => parseBenchArgs(['--workers', '1,0'])).toThrow('--workers must be a positive number, got "0"');
    // two batches of one count shared their tables: the second failed on 'table already exists'
    expect(() => parseBenchArgs(['concurrency', '--workers', '1,1'])).toThrow('--workers names 1 twice: each worker count runs once');
  });

  it('takes the size of the untimed warm-up batch of the concurrency scenario, none by default', () => {
    expect(parseBenchArgs(['concurrency']).warmUpBatch).toBe(0);
    expect(parseBenchArgs(['concurrency', '--warm-up-batch', '200']).warmUpBatch).toBe(200);
    expect(() => parseBenchArgs(['concurrency', '--warm-up-batch', '0'])).toThrow('--warm-up-batch must be a positive number, got "0"');
    expect(() => parseBenchArgs(['concurrency', '--warm-up-batch', '1.5'])).toThrow('--warm-up-batch must be a whole number, got "1.5"');
  });

  it("takes the busy cores of the loaded transfer passes (unloaded by default) and the long job's time compression", () => {
    expect(parseBenchArgs(['upload']).loadCores).toEqual([0]);
    expect(parseBenchArgs(['upload', '--load-cores', '0, 1']).loadCores).toEqual([0, 1]);
    expect(() => parseBenchArgs(['--load-cores', '1,x'])).toThrow('--load-cores takes whole numbers ≥ 0 (comma-separated), got "x"');
    expect(parseBenchArgs(['long-job']).longJobCompression).toBe(30);
    expect(parseBenchArgs(['long-job', '--long-job-compression', '60']).longJobCompression).toBe(60);
  });

  it('measures only batch mode on a long extraction unless modes are given', () => {
    expect(parseBenchArgs(['extract', '--pages', '100000']).extractModes).toEqual(['batch']);
    expect(parseBenchArgs(['extract', '--pages', '100000', '--modes', 'page']).extractModes).toEqual(['page']);
  });

  it('names the bad argument and what it accepts', () => {
    expect(() => parseBenchArgs(['uplod'])).toThrow('unknown scenario "uplod"; choose from idle, upload, download');
    expect(() => parseBenchArgs(['--size-mib', '0'])).toThrow('--size-mib must be a positive number, got "0"');
    expect(() => parseBenchArgs(['--pages', '1.5'])).toThrow('--pages must be a whole number, got "1.5"');
    expect(() => parseBenchArgs(['--modes', 'turbo'])).toThrow('--modes takes batch and/or page');
    expect(() => parseBenchArgs(['--link-mbps=-3'])).toThrow('--link-mbps must be a positive number, got "-3"');
    expect(() => parseBenchArgs(['--nope'])).toThrow();
  });

  it('alternates baseline and ours so that every run of ours sits between two baselines', () => {
    expect(alternation(1)).toEqual(['baseline', 'ours', 'baseline']);
    expect(alternation(2)).toEqual(['baseline', 'ours', 'baseline', 'ours', 'baseline']);
  });

  it('with a compare tree, puts both trees between two baselines and swaps which of them goes first', () => {
    expect(alternation(3, true)).toEqual(['baseline', 'ours', 'compare', 'baseline', 'compare', 'ours', 'baseline', 'ours', 'compare', 'baseline']);
  });

  it('takes the compare tree as an absolute path', () => {
    expect(parseBenchArgs([]).compareTree).toBeUndefined();
    expect(parseBenchArgs(['--compare-tree', '/tmp/old']).compareTree).toBe('/tmp/old');
    expect(parseBenchArgs(['--compare-tree', 'old']).compareTree).toBe(resolve('old'));
  });
});
