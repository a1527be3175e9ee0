import { describe, expect, it } from 'vitest';
import { DueBySecond } from '../../../pipelines/ingest/due-by-second.js';

describe('DueBySecond', () => {
  it('gives each key due at or before the second once, keeps the later ones, and forgets removed keys', () => {
    const d = new DueBySecond();
    d.add('a', 10);
    d.add('a', 11);
    d.add('b', 11);
    d.add('c', 12);
    d.add('gone', 10);
    d.remove('gone', 10);
    d.remove('never', 99);
    expect([...d.takeDue(9)]).toEqual([]);
    expect([...d.takeDue(11)].sort()).toEqual(['a', 'b']);
    expect([...d.takeDue(11)]).toEqual([]);
    expect([...d.takeDue(20)]).toEqual(['c']);
    d.add('d', 5);
    d.clear();
    expect([...d.takeDue(100)]).toEqual([]);
  });
});
