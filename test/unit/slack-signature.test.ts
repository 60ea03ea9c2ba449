import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '#platform/errors.js';
import { parseInteractionBody } from '../../functions/slack-interaction/interaction.js';
import {
  rawBodyOf,
  signSlackRequest,
  verifySlackSignature,
} from '../../functions/slack-interaction/slack-signature.js';

const c15 = JSON.parse(
  readFileSync(
    new URL('../../../shared/cases/C15-signature-v0-over-the-raw-form-encoded-body.json', import.meta.url),
    'utf8',
  ),
).input as {
  signing_secret: string;
  now_epoch_s: number;
  raw_body: string;
  headers: Record<string, string>;
  negative_reencoded_body: string;
};
const base64Event = JSON.parse(
  readFileSync(new URL('../../events/slack/function-url-block-actions-base64.json', import.meta.url), 'utf8'),
) as { body: string; isBase64Encoded: boolean; headers: Record<string, string> };

const verify = (
  rawBody: Uint8Array,
  headers: Record<string, string | undefined>,
  nowSeconds = c15.now_epoch_s,
) =>
  verifySlackSignature({
    rawBody,
    timestamp: headers['x-slack-request-timestamp'],
    signature: headers['x-slack-signature'],
    signingSecret: c15.signing_secret,
    nowSeconds,
  });

describe('Slack v0 signature', () => {
  it('C15 verifies the raw form-encoded body with the given headers and secret', () => {
    expect(verify(Buffer.from(c15.raw_body, 'utf8'), c15.headers)).toEqual({ ok: true });
    expect(
      signSlackRequest(c15.signing_secret, c15.headers['x-slack-request-timestamp'] as string, c15.raw_body),
    ).toBe(c15.headers['x-slack-signature']);
  });

  it('C15 verifies the API Gateway / Function URL event after base64-decoding to the exact same bytes', () => {
    const raw = rawBodyOf(base64Event);
    expect(raw.equals(Buffer.from(c15.raw_body, 'utf8'))).toBe(true);
    expect(verify(raw, base64Event.headers)).toEqual({ ok: true });
  });

  it('C15 verifies the same event delivered with a plain-text body (isBase64Encoded false)', () => {
    const plain = JSON.parse(
      readFileSync(new URL('../../events/slack/function-url-block-actions.json', import.meta.url), 'utf8'),
    ) as { body: string; isBase64Encoded: boolean; headers: Record<string, string> };
    expect(plain.isBase64Encoded).toBe(false);
    expect(rawBodyOf(plain).equals(rawBodyOf(base64Event))).toBe(true);
    expect(verify(rawBodyOf(plain), plain.headers)).toEqual({ ok: true });
  });

  it('C15 refuses the re-encoded body against the same signature (the hash covers the received bytes)', () => {
    expect(verify(Buffer.from(c15.negative_reencoded_body, 'utf8'), c15.headers)).toEqual({
      ok: false,
      reason: 'signature-mismatch',
    });
  });

  it('C15 refuses the base64 text itself when it is hashed without decoding', () => {
    expect(verify(Buffer.from(base64Event.body, 'utf8'), c15.headers).ok).toBe(false);
  });

  it('C15 decodes the payload only after verification: "+" as space and %2A as "*" in the message text', () => {
    const payload = parseInteractionBody(Buffer.from(c15.raw_body, 'utf8'));
    expect(payload.user.id).toBe('U0EXAMPLE1');
    expect((payload.message as { text: string }).text).toBe(
      '*Redrive request* for orders-dlq: 42 msgs (approve?) 100% + done',
    );
    expect(payload.actions[0]?.action_id).toBe('approve_redrive');
    expect(payload.actions[0]?.value).toBe('approval#orders-dlq#2026-01-02T10:35:00Z');
  });

  it('C15 names the missing header when the signature or timestamp is absent', () => {
    const raw = Buffer.from(c15.raw_body, 'utf8');
    expect(verify(raw, { 'x-slack-request-timestamp': '1767350395' })).toEqual({
      ok: false,
      reason: 'missing-signature',
    });
    expect(verify(raw, { 'x-slack-signature': c15.headers['x-slack-signature'] })).toEqual({
      ok: false,
      reason: 'missing-timestamp',
    });
  });

  it('C16 refuses a validly signed request whose timestamp is more than 5 minutes old', () => {
    const raw = Buffer.from(c15.raw_body, 'utf8');
    // The case's stale request: ts 1767349800 (600 s before now) with its valid signature.
    const headers = {
      'x-slack-request-timestamp': '1767349800',
      'x-slack-signature': 'v0=be64cc9367eccadba9faaad170683d3e648d5563a9b4fd83bf10a8cd0b651f1b',
    };
    expect(signSlackRequest(c15.signing_secret, 1767349800, raw)).toBe(headers['x-slack-signature']);
    expect(verify(raw, headers)).toEqual({ ok: false, reason: 'stale-timestamp' });
    // The same request 300 s after its timestamp is still inside the window.
    expect(verify(raw, headers, 1767349800 + 300)).toEqual({ ok: true });
  });

  it('refuses a signature of the wrong length without throwing (timingSafeEqual needs equal lengths)', () => {
    expect(verify(Buffer.from(c15.raw_body), { ...c15.headers, 'x-slack-signature': 'v0=abc' })).toEqual({
      ok: false,
      reason: 'malformed-signature',
    });
  });

  it('names the payload field when the signed body has no payload or bad JSON', () => {
    expect(() => parseInteractionBody(Buffer.from('foo=bar'))).toThrowError(/payload: is required/);
    expect(() => parseInteractionBody(Buffer.from('payload=%7Bnot-json'))).toThrowError(InvalidInputError);
    expect(() =>
      parseInteractionBody(
        Buffer.from(
          `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', user: { id: 'U1' } }))}`,
        ),
      ),
    ).toThrowError(/payload\.response_url/);
  });
});
