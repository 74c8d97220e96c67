//! Recall on LoCoMo from Rust, for tuning without a wasm build: the same
//! measurement as `bench/locomo.mjs` (which `npm run bench` runs), with the
//! core directly. `cargo run --release --example locomo -- <dir> [budget]`,
//! `<dir>` holding LoCoMo conversations (`../shared/testdata/locomo-dev`).
//! `RECALL_NEIGHBOURS`, `RECALL_SHARE` and `RECALL_DISTINCTION` override
//! recall's options; `RANKS=1` prints where the missed evidence ranks in the
//! widened search, `LOCOMO_SHOW=<category>` each missed question of it;
//! `E5=1` ranks by meaning too with the e5 fixture beside the conversations
//! (`<dir>/e5-small`: each text looked up by its role; a miss is an error).

use std::rc::Rc;

use context_compiler::clock::SystemClock;
use context_compiler::recall::embedder::{EmbedRole, Embedder};
use context_compiler::tokens::DefaultTokenCounter;
use context_compiler::working_context::ProviderFormat;
use context_compiler::{
    Compactor, CompileOptions, ContextCompiler, HistoryRecall, HistorySelector, Layout, Processor,
    Session,
};
use serde_json::Value;

const SYSTEM: &str = "You are a long-term conversational companion. Answer from what was said in earlier conversations.";

struct Question {
    text: String,
    category: u64,
    evidence: Vec<usize>,
}

/// A conversation's turns: whether speaker A said it, and its recorded text.
type Turns = Vec<(bool, String)>;

fn read(path: &std::path::Path) -> Result<(Turns, Vec<Question>), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let c: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let a = c["speaker_a"].as_str().unwrap_or_default().to_string();
    let mut turns = Vec::new();
    let mut ids = std::collections::HashMap::new();
    let mut n = 1;
    while let Some(session) = c.get(format!("session_{n}")).and_then(Value::as_array) {
        let date = c[format!("session_{n}_date_time")]
            .as_str()
            .unwrap_or_default();
        for t in session {
            let speaker = t["speaker"].as_str().unwrap_or_default();
            let shares = t["blip_caption"]
                .as_str()
                .map(|c| format!(" [shares {c}]"))
                .unwrap_or_default();
            let body = t["text"].as_str().unwrap_or_default();
            ids.insert(
                t["dia_id"].as_str().unwrap_or_default().to_string(),
                turns.len(),
            );
            turns.push((speaker == a, format!("{speaker}: {body}{shares} ({date})")));
        }
        n += 1;
    }
    let questions = c["qa"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|q| {
            let category = q["category"].as_u64()?;
            let evidence: Vec<usize> = q["evidence"]
                .as_array()?
                .iter()
                .filter_map(|e| ids.get(e.as_str()?).copied())
                .collect();
            ((1..=4).contains(&category) && !evidence.is_empty()).then(|| Question {
                text: q["question"].as_str().unwrap_or_default().to_string(),
                category,
                evidence,
            })
        })
        .collect();
    Ok((turns, questions))
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The e5 fixture: vectors by role and text.
struct Fixture {
    rows: std::collections::HashMap<(String, String), Vec<f32>>,
}

impl Fixture {
    fn read(dir: &str) -> Result<Fixture, String> {
        let keys: Value = serde_json::from_str(
            &std::fs::read_to_string(format!("{dir}/e5-small/keys.json"))
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
        let bytes =
            std::fs::read(format!("{dir}/e5-small/vectors.f32")).map_err(|e| e.to_string())?;
        let floats: Vec<f32> = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let items = keys["items"].as_array().ok_or("keys.json has no items")?;
        let dim = floats.len() / items.len().max(1);
        let rows = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let kind = item[0].as_str().unwrap_or_default().to_string();
                let text = item[1].as_str().unwrap_or_default().to_string();
                ((kind, text), floats[i * dim..(i + 1) * dim].to_vec())
            })
            .collect();
        Ok(Fixture { rows })
    }
}

#[async_trait::async_trait(?Send)]
impl Embedder for Fixture {
    async fn embed(
        &self,
        texts: &[String],
        role: EmbedRole,
    ) -> context_compiler::Result<Vec<Vec<f32>>> {
        texts
            .iter()
            .map(|t| {
                self.rows
                    .get(&(role.as_str().to_string(), t.clone()))
                    .cloned()
                    .ok_or_else(|| {
                        context_compiler::Error::new(
                            context_compiler::ErrorCode::ProcessorFailed,
                            format!("the fixture has no {} {t:?}", role.as_str()),
                        )
                    })
            })
            .collect()
    }
}

/// The README's pipeline; `RECALL_NEIGHBOURS`, `RECALL_SHARE` and
/// `RECALL_DISTINCTION` in the environment override recall's defaults.
fn compiler(embedder: Option<Rc<dyn Embedder>>) -> ContextCompiler {
    let mut recall = HistoryRecall::new();
    if let Some(e) = embedder {
        recall = recall.with_embedder(e);
    }
    let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<f64>().ok());
    if let Some(n) = var("RECALL_NEIGHBOURS") {
        recall = recall.with_neighbours(n as usize);
    }
    if let Some(s) = var("RECALL_SHARE") {
        recall = recall.with_share(s);
    }
    if let Some(d) = var("RECALL_DISTINCTION") {
        recall = recall.with_distinction(d);
    }
    ContextCompiler::with_layout(
        vec![
            Rc::new(HistorySelector::new(1, usize::MAX)) as Rc<dyn Processor>,
            Rc::new(Compactor::new()),
            Rc::new(recall),
        ],
        Layout::Zoned,
    )
}

fn new_session() -> Session {
    Session::with_env(
        Some("locomo".into()),
        Rc::new(SystemClock),
        Rc::new(DefaultTokenCounter),
        7,
    )
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).ok_or("usage: locomo <dir> [budget]")?;
    let budget: u64 = args.get(2).and_then(|b| b.parse().ok()).unwrap_or(4000);
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let options = CompileOptions::new(SYSTEM);
    let (mut hit, mut all) = (0usize, 0usize);
    let mut by_category = [(0usize, 0usize); 5];
    let (mut none, mut missing) = (0, 0);
    let mut recalled_turns = 0usize;
    let mut usage = [0u64; 5];
    let mut rank_buckets = [0usize; 5];
    let mut asked = 0usize;
    let embedder: Option<Rc<dyn Embedder>> = match std::env::var("E5") {
        Ok(_) => Some(Rc::new(Fixture::read(dir)?)),
        Err(_) => None,
    };
    for file in &files {
        let (turns, questions) = read(file)?;
        // The live loop without the embedder (the fixture has no turn
        // embedded as a query), the questions with it.
        let live = compiler(None);
        let compiler = compiler(embedder.clone());
        let mut base = new_session();
        for (i, (user, text)) in turns.iter().enumerate() {
            let kind = if *user {
                "user_input"
            } else {
                "assistant_output"
            };
            base.record(kind, serde_json::json!({ "content": text }), None)
                .map_err(|e| e.to_string())?;
            if i % 10 == 9 {
                pollster::block_on(live.compile_with(&mut base, budget, &options))
                    .map_err(|e| e.to_string())?;
            }
        }
        let exported = base.export_json();
        let (mut conv_hit, mut conv_all) = (0, 0);
        for q in &questions {
            let mut s = Session::import_json(
                &exported,
                Rc::new(SystemClock),
                Rc::new(DefaultTokenCounter),
                9,
            )
            .map_err(|e| e.to_string())?;
            s.record("user_input", serde_json::json!({ "content": q.text }), None)
                .map_err(|e| e.to_string())?;
            let ctx = pollster::block_on(compiler.compile_with(&mut s, budget, &options))
                .map_err(|e| e.to_string())?;
            assert!(ctx.token_count <= budget, "over budget");
            let request = collapse(&ctx.to_provider_messages(ProviderFormat::OpenAi).to_string());
            let found: Vec<bool> = q
                .evidence
                .iter()
                .map(|&i| {
                    let head: String = collapse(&turns[i].1).chars().take(80).collect();
                    let escaped = Value::String(head).to_string();
                    request.contains(&escaped[1..escaped.len() - 1])
                })
                .collect();
            let n = found.iter().filter(|f| **f).count();
            if std::env::var("RANKS").is_ok() {
                let hits = s.search_expanded(&q.text, 100);
                for (k, &i) in q.evidence.iter().enumerate() {
                    if !found[k] {
                        let rank = hits.iter().position(|h| h.position == i);
                        let bucket = match rank {
                            Some(r) if r < 10 => 0,
                            Some(r) if r < 30 => 1,
                            Some(r) if r < 60 => 2,
                            Some(_) => 3,
                            None => 4,
                        };
                        rank_buckets[bucket] += 1;
                    }
                }
            }
            if ctx.recalled.is_empty() {
                none += 1;
            }
            recalled_turns += ctx.recalled.len();
            usage[0] += ctx.zone_usage.system;
            usage[1] += ctx.zone_usage.persistent;
            usage[2] += ctx.zone_usage.working;
            usage[3] += ctx.zone_usage.recent;
            usage[4] += ctx.token_count;
            if n == 0 {
                missing += 1;
                if std::env::var("LOCOMO_SHOW").is_ok_and(|c| c == q.category.to_string()) {
                    let hits = s.search(&q.text, 100);
                    println!("MISS [{}] {}", q.category, q.text);
                    for &i in &q.evidence {
                        let rank = hits.iter().position(|h| h.position == i);
                        println!("   evidence {:?}: {}", rank, turns[i].1);
                    }
                    for h in hits.iter().take(3) {
                        println!(
                            "   top: {:.2} {}",
                            h.score,
                            turns.get(h.position).map(|t| t.1.as_str()).unwrap_or("?")
                        );
                    }
                }
            }
            conv_hit += n;
            conv_all += found.len();
            by_category[q.category as usize].0 += n;
            by_category[q.category as usize].1 += found.len();
        }
        println!(
            "{}: {:.2} ({} questions)",
            file.display(),
            conv_hit as f64 / conv_all as f64,
            questions.len()
        );
        asked += questions.len();
        hit += conv_hit;
        all += conv_all;
    }
    println!("budget {budget}: pooled {:.3}", hit as f64 / all as f64);
    for (c, name) in [
        (1, "multi-hop"),
        (2, "temporal"),
        (3, "open-domain"),
        (4, "single-hop"),
    ] {
        let (h, a) = by_category[c];
        println!("  {name}: {:.2}", h as f64 / a.max(1) as f64);
    }
    println!(
        "  nothing recalled: {none}, no evidence: {missing}, turns recalled per question: {:.1}",
        recalled_turns as f64 / asked.max(1) as f64
    );
    println!(
        "  missed evidence by rank in the widened search: <10 {}, <30 {}, <60 {}, <100 {}, none {}",
        rank_buckets[0], rank_buckets[1], rank_buckets[2], rank_buckets[3], rank_buckets[4]
    );
    let per = |x: u64| x / asked.max(1) as u64;
    println!(
        "  tokens per request: system {} persistent {} working {} recent {} total {}",
        per(usage[0]),
        per(usage[1]),
        per(usage[2]),
        per(usage[3]),
        per(usage[4])
    );
    Ok(())
}
