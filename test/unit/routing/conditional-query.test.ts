import { describe, expect, it } from 'vitest';
import { queryOperators } from '../../../lib/config/condition-query';
import { matchesQuery } from '../../../lib/routing/conditional-query';

const input = {
  metadata: { tier: 'pro', region: 'eu', score: '7' },
  params: { model: 'gpt-4o', max_tokens: 500, messages: [{ role: 'user' }], tools: [], odd: { toString: 1 } },
  url: { pathname: '/v1/chat/completions' },
};

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

  // The config validates against the vocabulary in lib/config; an operator it accepts that the
  // matcher did not know would make a saved condition silently never match.
  const matchingCondition: Record<(typeof queryOperators)[number], Record<string, unknown>> = {
    $eq: { 'metadata.tier': { $eq: 'pro' } },
    $ne: { 'metadata.tier': { $ne: 'free' } },
    $gt: { 'params.max_tokens': { $gt: 499 } },
    $gte: { 'params.max_tokens': { $gte: 500 } },
    $lt: { 'params.max_tokens': { $lt: 501 } },
    $lte: { 'params.max_tokens': { $lte: 500 } },
    $in: { 'metadata.region': { $in: ['eu'] } },
    $nin: { 'metadata.region': { $nin: ['us'] } },
    $regex: { 'url.pathname': { $regex: '^/v1/' } },
    $exists: { 'metadata.tier': { $exists: true } },
  };

  it.each(queryOperators.map((operator) => [operator]))('understands %s, which a config may use', (operator) => {
    expect(matchesQuery(matchingCondition[operator], input)).toBe(true);
  });
});
