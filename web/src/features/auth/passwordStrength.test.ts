import { describe, expect, it } from 'vitest';
import { passwordColor, passwordMeter, passwordScore } from './passwordStrength.ts';

describe('passwordScore', () => {
  it.each([
    ['', 0],
    ['abcdefgh', 25],
    ['abcdEFGH', 50],
    ['abcdEF12', 75],
    ['abcD1!xy', 100],
    ['!!!!', 25],
    ['ZAŻÓŁĆ12', 75],
  ])('%j scores %i', (pw, score) => {
    expect(passwordScore(pw)).toBe(score);
  });
});

describe('passwordColor', () => {
  it.each([
    [100, 7, 'red'],
    [25, 12, 'red'],
    [75, 8, 'yellow'],
    [100, 8, 'teal'],
  ] as const)('score %i at length %i is %s', (score, length, color) => {
    expect(passwordColor(score, length)).toBe(color);
  });
});

describe('passwordMeter', () => {
  it.each([
    ['', 0, 'red'],
    ['a', 25, 'red'],
    ['aB1!', 25, 'red'],
    ['aB1!xyz', 25, 'red'],
    ['abcdefgh', 25, 'red'],
    ['abcdEFGH', 50, 'yellow'],
    ['abcdEF12', 75, 'yellow'],
    ['aB1!xyzw', 100, 'teal'],
    ['żółćŻÓŁĆ', 25, 'red'],
  ] as const)('%j shows %i in %s', (pw, value, color) => {
    expect(passwordMeter(pw)).toEqual({ value, color });
  });
});
