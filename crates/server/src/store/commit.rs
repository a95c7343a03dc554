//! Group commit: one writer task per server applies every review change that
//! is waiting in one transaction, so many concurrent decisions share one
//! durable sync instead of one each. Each caller is answered only after the
//! transaction holding its change has committed.

use super::reviews::{apply_batch, ChangeError, Replacement};
use super::{begin_write, is_transient, stored_time, Backend, DbError, RETRIES};
use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot};

/// Most changes in one transaction.
const MAX_BATCH: usize = 256;

type Job = (Replacement, oneshot::Sender<Result<(), ChangeError>>);

/// The handle that queues changes for the writer task.
#[derive(Clone)]
pub struct Writer {
    queue: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer task on the current runtime.
    pub fn start(pool: AnyPool, backend: Backend) -> Writer {
        let (queue, jobs) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(run(pool, backend, jobs));
        Writer { queue }
    }

    /// Queues a change and waits until it is committed (or refused).
    pub async fn submit(&self, change: Replacement) -> Result<(), ChangeError> {
        let (reply, answer) = oneshot::channel();
        let stopped = || ChangeError::Db(DbError::Damaged("the database writer stopped".into()));
        self.queue
            .send((change, reply))
            .await
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

async fn run(pool: AnyPool, backend: Backend, mut jobs: mpsc::Receiver<Job>) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        match commit_retrying(&pool, backend, &batch).await {
            Ok(results) => answer(batch, results),
            // One change the database refuses must not fail the others that
            // shared its transaction: each is tried again alone, and only the
            // ones that fail alone are refused, with their own cause.
            Err(e) if batch.len() > 1 => {
                tracing::warn!(
                    "a group commit of {} changes failed ({e}); committing them one by one",
                    batch.len()
                );
                for job in batch {
                    match commit_retrying(&pool, backend, std::slice::from_ref(&job)).await {
                        Ok(results) => answer(vec![job], results),
                        Err(e) => {
                            let _ = job.1.send(Err(ChangeError::Db(DbError::Sql(e))));
                        }
                    }
                }
            }
            Err(e) => {
                if let Some((_, reply)) = batch.pop() {
                    let _ = reply.send(Err(ChangeError::Db(DbError::Sql(e))));
                }
            }
        }
    }
}

fn answer(batch: Vec<Job>, results: Vec<Result<(), ChangeError>>) {
    for ((_, reply), result) in batch.into_iter().zip(results) {
        let _ = reply.send(result);
    }
}

/// [`commit`], run again when it failed for a transient reason (a deadlock or
/// serialization failure), a few times.
async fn commit_retrying(
    pool: &AnyPool,
    backend: Backend,
    batch: &[Job],
) -> Result<Vec<Result<(), ChangeError>>, sqlx::Error> {
    let mut tries = 0;
    loop {
        match commit(pool, backend, batch).await {
            Err(e) if is_transient(&e) && tries < RETRIES => tries += 1,
            done => return done,
        }
    }
}

async fn commit(
    pool: &AnyPool,
    backend: Backend,
    batch: &[Job],
) -> Result<Vec<Result<(), ChangeError>>, sqlx::Error> {
    let now = stored_time(chrono::Utc::now());
    let mut tx = begin_write(pool, backend).await?;
    let changes: Vec<&Replacement> = batch.iter().map(|(change, _)| change).collect();
    let results = apply_batch(&mut tx, &changes, &now).await?;
    tx.commit().await?;
    Ok(results)
}
