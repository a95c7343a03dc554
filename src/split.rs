//! Code that the first load does without. With the `split` feature (the release
//! build) each function declared with [`on_demand!`] is a split point: its code,
//! and everything only it uses, goes to its own wasm chunk, fetched the first time
//! it is called (scripts/split-app.mjs cuts the chunks). Without the feature
//! (`trunk serve`, tests) they are plain async calls that cannot fail.

/// The code could not be fetched (offline, or the server stopped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadFailed;

#[cfg(feature = "split")]
impl From<leptos::wasm_split::SplitLoaderError> for LoadFailed {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        LoadFailed
    }
}

/// Declares `async fn name(args) -> Result<T, LoadFailed>`, a split point in the
/// release build, and with `/ preload` an `async fn preload() -> Result<(), LoadFailed>`
/// that fetches its code ahead of need. Split points `in` the same chunk load
/// together (fewer, larger chunks: each fetch and instantiation has a cost).
macro_rules! on_demand {
    ($(#[$doc:meta])* in $chunk:ident fn $name:ident $(/ $preload:ident)? ($($arg:ident: $ty:ty),*) -> $out:ty $body:block) => {
        $(#[$doc])*
        #[cfg(feature = "split")]
        #[leptos::wasm_split::wasm_split(
            $chunk,
            wasm_split_path = ::leptos::wasm_split,
            fallible,
            $(preload(#[doc = "Fetches the code ahead of need."] $preload))?
        )]
        pub fn $name($($arg: $ty),*) -> Result<$out, $crate::split::LoadFailed> {
            Ok($body)
        }

        $(#[$doc])*
        #[cfg(not(feature = "split"))]
        pub async fn $name($($arg: $ty),*) -> Result<$out, $crate::split::LoadFailed> {
            Ok($body)
        }

        $(
            /// Fetches the code ahead of need.
            #[cfg(not(feature = "split"))]
            pub async fn $preload() -> Result<(), $crate::split::LoadFailed> {
                Ok(())
            }
        )?
    };
}
pub(crate) use on_demand;
