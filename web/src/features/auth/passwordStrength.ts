/** docs/spec.md §5: minimum length 8; the score is the share of satisfied checks; it blocks nothing. */
export const PASSWORD_MIN_LENGTH = 8;

const CHECKS: readonly RegExp[] = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/];

/** 0..100: the share of lowercase, uppercase, digit and special-character checks met. */
export function passwordScore(password: string): number {
  if (!password) return 0;
  const met = CHECKS.filter((re) => re.test(password)).length;
  return Math.round((met / CHECKS.length) * 100);
}

export function passwordColor(score: number, length: number): 'red' | 'yellow' | 'teal' {
  if (length < PASSWORD_MIN_LENGTH || score < 50) return 'red';
  return score < 100 ? 'yellow' : 'teal';
}

/**
 * What the meter shows: the score, held at one check's share (25) until the password is long enough, so
 * a short password never looks strong; and its colour.
 */
export function passwordMeter(password: string): { value: number; color: 'red' | 'yellow' | 'teal' } {
  const score = passwordScore(password);
  const length = [...password].length;
  return {
    value: length >= PASSWORD_MIN_LENGTH ? score : Math.min(score, 100 / CHECKS.length),
    color: passwordColor(score, length),
  };
}
