// Seeded long conversations with questions about them, for the recall
// benchmark (bench/recall.mjs).
//
// A conversation is several hundred turns across dated sessions between a
// user and an assistant: small talk and work chatter (with tool outputs now
// and then), and, scattered through it, facts the user states once about
// people, places, dates, numbers and things, beside distractors (the same
// kind of fact about someone or something else). The questions come at the
// end, each asked as the newest user message, of four kinds:
//
// - direct: worded like the fact ("Which city did my sister Ada move to?");
// - paraphrased: few words shared with the fact ("Where does my sibling
//   live these days?" for "my sister Ada moved to Porto");
// - temporal: "When did I tell you about ...?", answered by the date of
//   the session the fact was told in;
// - multi-hop: two facts far apart ("Ada works at Lumen", "Lumen has its
//   office in Brno": "In which city is Ada's office?").
//
// Each question carries the turns holding its evidence (indices into the
// conversation's turns). Nothing here knows how any ranker scores: the
// templates are written as people write, the paraphrases by hand.
import { rng } from "./trace.mjs";

const NAMES = ["Ada", "Bruno", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko", "Luis", "Maya", "Nils", "Olga", "Pavel", "Rosa", "Sami", "Tara", "Umar"];
const CITIES = ["Porto", "Brno", "Tallinn", "Ghent", "Bergen", "Lyon", "Kraków", "Bilbao", "Graz", "Aarhus", "Turin", "Split", "Leeds", "Utrecht", "Basel", "Malmö"];
const COMPANIES = ["Lumen", "Northwind", "Quarry Labs", "Bluefin", "Halcyon", "Tessera", "Pinewood", "Corvid Systems", "Marigold", "Stratos"];
const PETS = ["a beagle", "a grey cat", "two budgies", "a tortoise", "a rescue greyhound", "a ginger kitten"];
const PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Ziggy", "Juniper", "Otto", "Clover", "Nacho"];
const DISHES = ["mushroom risotto", "lentil soup", "pad thai", "shakshuka", "pierogi", "a lemon tart", "paella", "ramen"];
const RELATIONS = [
  ["sister", "sibling"],
  ["brother", "sibling"],
  ["cousin", "relative"],
  ["old flatmate", "former roommate"],
  ["manager", "boss"],
];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

const FILLER_TOPICS = [
  "the weather this week", "a podcast about history", "weekend plans", "a new coffee place", "the football results",
  "a book about habits", "cleaning the flat", "a film from the nineties", "learning to bake bread", "the commute",
  "a board game night", "gardening on the balcony", "a running playlist", "a museum exhibition", "fixing the bike",
];
const FILLER_USER = [
  "Any thoughts on {t}?", "I was thinking about {t} again.", "Can you tell me something interesting about {t}?",
  "What would you suggest regarding {t}?", "Honestly {t} took most of my evening.", "Remind me why {t} matters?",
];
const FILLER_ASSISTANT = [
  "Sure. When it comes to {t}, most people find that small, regular steps work better than big plans, and it helps to note what went well.",
  "That is a good question about {t}. A few ideas: keep it simple, try one change at a time, and see how it feels after a week.",
  "{T} can be surprisingly absorbing. If you want, we can break it down into a short list of things to try next.",
  "Here is a short overview of {t}: there are several schools of thought, and the best choice depends on your time and mood.",
];
const WORK_USER = [
  "Can you check the build logs for the deploy job?", "Please list the files in the config directory.",
  "Look at the failing test in the payments module.", "Search the docs for the retry settings.",
];

function pick(r, list) {
  return list[Math.floor(r() * list.length)];
}

function shuffled(r, list) {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function fillerPair(r) {
  const t = pick(r, FILLER_TOPICS);
  const T = t[0].toUpperCase() + t.slice(1);
  return [pick(r, FILLER_USER).replace("{t}", t), pick(r, FILLER_ASSISTANT).replace("{t}", t).replace("{T}", T)];
}

function toolOutputText(r) {
  const lines = [];
  const n = 5 + Math.floor(r() * 25);
  for (let i = 0; i < n; i++) {
    lines.push(`${String(i).padStart(4, "0")} ${pick(r, ["INFO", "WARN", "DEBUG"])} worker-${Math.floor(r() * 9)} step ${Math.floor(r() * 1000)} ok in ${Math.floor(r() * 900)} ms`);
  }
  return lines.join("\n");
}

/**
 * The fact families: each makes a fact (the user's words, and the
 * assistant's acknowledgement) about an entity, a distractor of the same
 * family about another, and its questions.
 */
function factFamilies(r) {
  const names = shuffled(r, NAMES);
  const cities = shuffled(r, CITIES);
  const companies = shuffled(r, COMPANIES);
  const families = [];
  // Relatives who moved.
  for (let i = 0; i < 3; i++) {
    const [rel, para] = RELATIONS[i];
    const name = names.pop();
    const city = cities.pop();
    families.push({
      fact: `By the way, my ${rel} ${name} moved to ${city} last month, so visits will be rarer.`,
      ack: `That is a big change for ${name}. I hope the move went smoothly.`,
      distractor: `A colleague of mine, ${names.pop()}, keeps talking about moving to ${cities.pop()} one day.`,
      questions: [
        { kind: "direct", text: `Which city did my ${rel} ${name} move to?`, answer: city },
        { kind: "paraphrased", text: `Where does my ${para} live these days?`, answer: city },
        { kind: "temporal", text: `When did I tell you that ${name} was relocating?`, answer: "date" },
      ],
    });
  }
  // A pet.
  {
    const pet = pick(r, PETS);
    const petName = pick(r, PET_NAMES);
    families.push({
      fact: `We finally adopted ${pet}! We named it ${petName}.`,
      ack: `Congratulations! ${petName} is a lovely name.`,
      distractor: `My neighbour's dog barks every morning at seven.`,
      questions: [
        { kind: "direct", text: `What did we name the pet we adopted?`, answer: petName },
        { kind: "paraphrased", text: `Remind me what our new animal is called?`, answer: petName },
        { kind: "temporal", text: `When did we get ${petName}?`, answer: "date" },
      ],
    });
  }
  // A number: the flat's rent, a budget.
  {
    const rent = 700 + Math.floor(r() * 900);
    families.push({
      fact: `The landlord raised the rent to ${rent} euros a month, effective next quarter.`,
      ack: `Noted: ${rent} euros a month from next quarter.`,
      distractor: `Groceries were about ${100 + Math.floor(r() * 80)} euros this week.`,
      questions: [
        { kind: "direct", text: `How much is the new rent per month?`, answer: String(rent) },
        { kind: "paraphrased", text: `What will I be paying for housing each month after the increase?`, answer: String(rent) },
      ],
    });
  }
  // A date: a dentist appointment.
  {
    const day = 1 + Math.floor(r() * 27);
    const month = pick(r, MONTHS);
    const clinic = `${pick(r, ["Harbour", "Elm Street", "Riverside", "Old Town"])} clinic`;
    families.push({
      fact: `My dentist appointment is on ${day} ${month} at the ${clinic}.`,
      ack: `Got it: the dentist on ${day} ${month}, ${clinic}.`,
      distractor: `The car's service is booked for some time next month.`,
      questions: [
        { kind: "direct", text: `On which day is my dentist appointment?`, answer: `${day} ${month}` },
        { kind: "paraphrased", text: `When do I need to get my teeth checked, and where?`, answer: clinic },
      ],
    });
  }
  // A favourite dish.
  {
    const dish = pick(r, DISHES);
    families.push({
      fact: `I cooked ${dish} for the first time and it turned out to be my new favourite dinner.`,
      ack: `Nice, ${dish} is a great thing to have in your repertoire.`,
      distractor: `We ordered pizza on Friday because nobody wanted to cook.`,
      questions: [
        { kind: "direct", text: `What is my new favourite dinner that I cooked?`, answer: dish },
        { kind: "paraphrased", text: `Which meal did I say I love making now?`, answer: dish },
      ],
    });
  }
  // Multi-hop: a person's employer, the employer's office.
  for (let i = 0; i < 2; i++) {
    const name = names.pop();
    const company = companies.pop();
    const city = cities.pop();
    families.push({
      fact: `${name} just started a new job at ${company}.`,
      ack: `Good luck to ${name} at ${company}.`,
      second: {
        fact: `Interesting: ${company} has its main office in ${city}.`,
        ack: `So ${company} is based in ${city}. Noted.`,
      },
      distractor: `${companies.pop()} is hiring again, according to the news.`,
      questions: [{ kind: "multi-hop", text: `In which city is ${name}'s new office?`, answer: city }],
    });
  }
  return families;
}

/**
 * A conversation of `sessions` dated sessions of about `perSession` turns:
 * `{ turns: [{ role, content, date, toolName? }], questions: [{ kind, text,
 * answer, evidence: [turn indices] }] }`. Deterministic for a seed.
 */
export function conversation(seed, { sessions = 14, perSession = 36 } = {}) {
  const r = rng(seed);
  const families = factFamilies(r);
  const start = Date.UTC(2025, 0, 6, 9, 0);
  // Where each fact (and second fact, and distractor) goes: session, slot.
  const placements = [];
  for (const f of families) {
    placements.push({ family: f, part: "fact", session: Math.floor(r() * (sessions - 2)) });
    if (f.second) placements.push({ family: f, part: "second", session: Math.floor(r() * (sessions - 1)) });
    placements.push({ family: f, part: "distractor", session: Math.floor(r() * sessions) });
  }
  const turns = [];
  const where = new Map();
  for (let s = 0; s < sessions; s++) {
    const day = start + s * 86_400_000 * (2 + Math.floor(r() * 5));
    const here = placements.filter((p) => p.session === s);
    const slots = new Set(here.map(() => Math.floor(r() * (perSession / 2))));
    let placed = 0;
    for (let t = 0; t < perSession / 2; t++) {
      const at = day + t * 90_000;
      if (slots.has(t) && placed < here.length) {
        const p = here[placed++];
        const text = p.part === "fact" ? p.family.fact : p.part === "second" ? p.family.second.fact : p.family.distractor;
        const ack = p.part === "fact" ? p.family.ack : p.part === "second" ? p.family.second.ack : "I see.";
        where.set(`${families.indexOf(p.family)}:${p.part}`, turns.length);
        turns.push({ role: "user", content: text, date: at });
        turns.push({ role: "assistant", content: ack, date: at + 30_000 });
      } else if (r() < 0.15) {
        turns.push({ role: "user", content: pick(r, WORK_USER), date: at });
        turns.push({ role: "tool", toolName: pick(r, ["read_logs", "list_files", "search_docs"]), content: toolOutputText(r), date: at + 10_000 });
        turns.push({ role: "assistant", content: "I checked: nothing unusual in there, the job finished normally.", date: at + 30_000 });
      } else {
        const [u, a] = fillerPair(r);
        turns.push({ role: "user", content: u, date: at });
        turns.push({ role: "assistant", content: a, date: at + 30_000 });
      }
    }
    // Facts not placed for lack of slots go at the session's end.
    for (const p of here.slice(placed)) {
      const text = p.part === "fact" ? p.family.fact : p.part === "second" ? p.family.second.fact : p.family.distractor;
      where.set(`${families.indexOf(p.family)}:${p.part}`, turns.length);
      turns.push({ role: "user", content: text, date: day + perSession * 90_000 });
      turns.push({ role: "assistant", content: "Noted.", date: day + perSession * 90_000 + 30_000 });
    }
  }
  const questions = [];
  families.forEach((f, i) => {
    const evidence = [where.get(`${i}:fact`)];
    if (f.second) evidence.push(where.get(`${i}:second`));
    for (const q of f.questions) questions.push({ ...q, evidence });
  });
  return { turns, questions };
}
