//! Reads by id in rounds, as the writer commits in batches: the requests
//! waiting when a round starts share its one `… IN (…)` query (under load one
//! round trip to the database for many requests instead of one each). A
//! request is never answered from a query that started before it asked, so
//! it sees every change committed before it asked (a key revoked, a decision
//! stored).

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::{mpsc, oneshot};

use super::DbError;

/// Most ids read by one query.
const ROUND: usize = 128;

type Lookup<V> = (String, oneshot::Sender<Result<Option<V>, String>>);

/// What a round's query found, by id; or the database's message.
pub(crate) type Found<V> = Result<HashMap<String, V>, String>;

/// A round's query under way.
pub(crate) type ReadFuture<V> = Pin<Box<dyn Future<Output = Found<V>> + Send>>;

/// The query of one round: the rows of these ids.
pub(crate) type Read<V> = fn(sqlx::AnyPool, Vec<String>) -> ReadFuture<V>;

/// The handle that queues reads for one reader task.
pub(crate) struct Rounds<V> {
    queue: mpsc::UnboundedSender<Lookup<V>>,
}

impl<V> Clone for Rounds<V> {
    fn clone(&self) -> Self {
        Rounds {
            queue: self.queue.clone(),
        }
    }
}

impl<V: Clone + Send + 'static> Rounds<V> {
    /// Starts a reader task on the current runtime that answers with `read`.
    pub(crate) fn start(pool: sqlx::AnyPool, read: Read<V>) -> Rounds<V> {
        let (queue, lookups) = mpsc::unbounded_channel();
        tokio::spawn(read_rounds(pool, read, lookups));
        Rounds { queue }
    }

    /// The row of `id`, if there is one, read by a query that started after this call.
    pub(crate) async fn get(&self, id: &str) -> Result<Option<V>, DbError> {
        let (reply, answer) = oneshot::channel();
        let stopped = || DbError::Failed("a database reader stopped".into());
        self.queue
            .send((id.to_owned(), reply))
            .map_err(|_| stopped())?;
        answer
            .await
            .map_err(|_| stopped())?
            .map_err(DbError::Failed)
    }
}

async fn read_rounds<V: Clone>(
    pool: sqlx::AnyPool,
    read: Read<V>,
    mut lookups: mpsc::UnboundedReceiver<Lookup<V>>,
) {
    while let Some(first) = lookups.recv().await {
        let mut round = vec![first];
        while round.len() < ROUND {
            match lookups.try_recv() {
                Ok(lookup) => round.push(lookup),
                Err(_) => break,
            }
        }
        let ids: BTreeSet<&str> = round.iter().map(|(id, _)| id.as_str()).collect();
        let found = read(pool.clone(), ids.into_iter().map(str::to_owned).collect()).await;
        for (id, reply) in round {
            let answer = match &found {
                Ok(rows) => Ok(rows.get(&id).cloned()),
                Err(e) => Err(e.clone()),
            };
            let _ = reply.send(answer);
        }
    }
}

/// The rows `select` (a query ending in `… IN`) finds for these ids.
pub(crate) async fn rows_in(
    pool: &sqlx::AnyPool,
    select: &str,
    ids: &[String],
) -> Result<Vec<sqlx::any::AnyRow>, String> {
    let marks: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
    let sql = format!("{select} ({})", marks.join(", "));
    let mut query = sqlx::query(&sql);
    for id in ids {
        query = query.bind(id);
    }
    query.fetch_all(pool).await.map_err(|e| e.to_string())
}
