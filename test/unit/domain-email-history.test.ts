// Unit tests of the email history's order (lambdas/domain/email/history.ts): the order key, and which event ids
// already sort as their order keys do (made at the event's own millisecond), so they need no time index.
import { describe, expect, it } from 'vitest';
import { historyOrderKey, idOrdersByTime } from '../../lambdas/domain/email/history';
import { timeOrderedId } from '../../lambdas/domain/ids';

const T0 = Date.UTC(2026, 10, 26, 1, 0, 0);
const bytes = (n: number) => () => Uint8Array.from({ length: 16 }, (_, i) => (n + i) % 256);

describe('idOrdersByTime', () => {
  it("is true for an id made at the event's own millisecond, whatever ISO form the time is in", () => {
    const id = timeOrderedId('evt', T0 + 1, bytes(1));
    expect(idOrdersByTime({ id, timestamp: new Date(T0 + 1).toISOString() })).toBe(true);
    expect(idOrdersByTime({ id, timestamp: '2026-11-26T02:00:00.001+01:00' })).toBe(true);
  });

  it('is false for an id made at another time, another prefix, an id without a time, or an unreadable time', () => {
    const at = new Date(T0).toISOString();
    expect(idOrdersByTime({ id: timeOrderedId('evt', T0 - 1, bytes(1)), timestamp: at })).toBe(false);
    expect(idOrdersByTime({ id: timeOrderedId('dlv', T0, bytes(1)), timestamp: at })).toBe(false);
    expect(idOrdersByTime({ id: 'evt_sent', timestamp: at })).toBe(false);
    expect(idOrdersByTime({ id: timeOrderedId('evt', T0, bytes(1)), timestamp: 'yesterday' })).toBe(false);
  });

  it('orders such ids exactly as their order keys', () => {
    const entries = Array.from({ length: 200 }, (_, i) => {
      const ms = T0 + Math.floor(i / 3) * 7;
      return { id: timeOrderedId('evt', ms, bytes(i * 13)), timestamp: new Date(ms).toISOString() };
    });
    const byId = [...entries].sort((a, b) => (a.id < b.id ? -1 : 1)).map((e) => e.id);
    const byKey = [...entries].sort((a, b) => (historyOrderKey(a) < historyOrderKey(b) ? -1 : 1)).map((e) => e.id);
    expect(entries.every(idOrdersByTime)).toBe(true);
    expect(byId).toEqual(byKey);
  });
});
