// Compiled by tests/node/types.test.mjs with tsc --strict: the published types of
// @suggestd/client (clients/js/index.d.ts) describe the way the README uses the package.
import {
  createClient,
  autocomplete,
  segments,
  SuggestError,
  type QueryAnswer,
  type Suggestion,
  type Bootstrap,
  type Synonyms,
  type SynonymSet,
} from '../../../clients/js/index.js';

// The control plane's synonyms body, as a server-side script would PUT it.
const sets: Synonyms = {
  synonyms: [
    { type: 'equivalent', phrases: ['NYC', 'New York City'] },
    { type: 'oneWay', input: 'tv', phrases: ['television'] },
  ],
};
// @ts-expect-error a oneWay set needs its input
const bad: SynonymSet = { type: 'oneWay', phrases: ['television'] };
console.log(sets.synonyms.length, bad);

const client = createClient({
  runtime: 'https://rt.example.com',
  key: 'pk_x',
  getToken: async () => ({ accessToken: 'eyJ…', expiresAt: 1795435843 }),
  limit: 5,
});

async function main(input: HTMLInputElement): Promise<void> {
  const boot: Bootstrap = await client.bootstrap();
  const min: number = boot.queryPolicy.minQueryChars;
  const answer: QueryAnswer = await client.query('par', { signal: new AbortController().signal });
  const first: Suggestion | undefined = answer.items[0];
  if (first && first.highlight) {
    const parts = segments(first.displayValue, first.highlight);
    const marked: string[] = parts.filter((p) => p.mark).map((p) => p.text);
    console.log(min, marked, first.ancestors?.map((a) => a.displayValue));
    const sent: boolean = await client.select(answer, first, 1);
    console.log(sent);
  }
  const widget = autocomplete(input, {
    client,
    onSelect: (item, ans, position) => console.log(item.value, ans.requestId, position),
    onError: (e: SuggestError) => console.log(e.code, e.status),
    messages: { count: (n) => `${n} results` },
  });
  widget.close();
  widget.destroy();
}
void main;
