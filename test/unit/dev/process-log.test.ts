import { logExcerpt } from '../../../src/dev/process';

describe('logExcerpt', () => {
  const frames = Array.from({ length: 40 }, (_, i) => `\tframe ${i}`);

  it('keeps a Go panic reason that the goroutine dump pushed out of the last lines', () => {
    const log = [
      'starting',
      'panic: failed assigning ephemeral port: failed to assign a free port: accept tcp: too many open files',
      '',
      'goroutine 1 [running]:',
      ...frames,
    ].join('\n');
    const excerpt = logExcerpt(log, 5).split('\n');
    expect(excerpt[0]).toBe('panic: failed assigning ephemeral port: failed to assign a free port: accept tcp: too many open files');
    expect(excerpt.slice(-5)).toEqual(frames.slice(-5));
    expect(excerpt).not.toContain('starting');
  });

  it('is the last lines alone when they already hold the reason or there is none', () => {
    expect(logExcerpt('a\nb\nc\nd\n', 2)).toBe('c\nd');
    expect(logExcerpt('a\npanic: boom\ngoroutine 1\n', 5)).toBe('a\npanic: boom\ngoroutine 1');
  });
});
