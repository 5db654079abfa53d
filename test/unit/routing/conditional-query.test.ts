import { describe, expect, it } from 'vitest';
import { matchesQuery } from '../../../lib/routing/conditional-query';

const input = { metadata: { tier: 'pro', region: 'eu', score: '7' }, params: { model: 'gpt-4o', max_tokens: 500, messages: [{ role: 'user' }], tools: [], odd: { toString: 1 } }, url: { pathname: '/v1/chat/completions' } };

describe('conditional queries', () => {
  it.each([
    [{ 'metadata.tier': 'pro' }, true],
    [{ 'metadata.tier': { $eq: 'free' } }, false],
    [{ 'metadata.tier': { $ne: 'free' } }, true],
    [{ 'metadata.score': { $gt: 5 } }, true],
    [{ 'metadata.score': { $lte: 6 } }, false],
    [{ 'params.max_tokens': { $gte: 500, $lt: 1000 } }, true],
    [{ 'params.model': { $in: ['gpt-4o', 'gpt-4.1'] } }, true],
    [{ 'params.model': { $nin: ['gpt-4o'] } }, false],
    [{ 'params.model': { $regex: '^gpt-4' } }, true],
    [{ 'params.temperature': { $exists: false } }, true],
    [{ 'params.messages.0.role': 'user' }, true],
    [{ 'url.pathname': '/v1/chat/completions' }, true],
    [{ $or: [{ 'metadata.tier': 'free' }, { 'metadata.region': 'eu' }] }, true],
    [{ $and: [{ 'metadata.tier': 'pro' }, { 'metadata.region': 'us' }] }, false],
    [{ 'metadata.tier': 'pro', 'metadata.region': 'us' }, false],
    [{ 'params.model': { $regex: '(' } }, false],
    [{ 'metadata.tier': { $unknown: 1 } }, false],
    [{ 'params.odd': { $gt: 1 } }, false],
    [{ 'params.odd': { $lte: 'z' } }, false],
  ])('%j → %s', (query, expected) => {
    expect(matchesQuery(query, input)).toBe(expected);
  });
});
