//! `choice!`: an enum for a closed set of names in the configuration, read from and written
//! to TOML by those names (`"cost_benefit"`), compared in code as a value. Defined before
//! every other module (lib.rs), so any layer can declare its own.

/// An enum whose variants are written in TOML by the given names.
macro_rules! choice {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $var:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $var),+
        }

        impl $name {
            /// Every name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];
            /// Every value, in the same order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The name as written in TOML.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$var => $text),+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
