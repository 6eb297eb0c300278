// Streams one chat completion with the official `openai` client, asking for
// the log-probabilities of its tokens and the 5 most likely at each step,
// and prints {"text", "usage", "chunks", "finish_reason", "logprobs"} as one
// JSON line (logprobs: every chunk's choices[0].logprobs.content, joined).
// Usage: node stream_chat.mjs BASE_URL MODEL PROMPT MAX_TOKENS
import OpenAI from "openai";

const [baseURL, model, prompt, maxTokens] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey: "unused", maxRetries: 0 });
const stream = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: prompt }],
  max_tokens: Number(maxTokens),
  temperature: 0,
  stream: true,
  stream_options: { include_usage: true },
  logprobs: true,
  top_logprobs: 5,
});
let text = "";
let usage = null;
let chunks = 0;
let finish = null;
const logprobs = [];
for await (const chunk of stream) {
  chunks += 1;
  for (const c of chunk.choices) {
    text += c.delta?.content ?? "";
    if (c.finish_reason) finish = c.finish_reason;
    for (const entry of c.logprobs?.content ?? []) logprobs.push(entry);
  }
  if (chunk.usage) usage = chunk.usage;
}
console.log(JSON.stringify({ text, usage, chunks, finish_reason: finish, logprobs }));
