export interface Budget {
  remainingMs(): number;
}

export class Clock {
  now(): number {
    return Date.now();
  }
}

export function canAfford(b: Budget, ms: number): boolean {
  return b.remainingMs() >= ms;
}
