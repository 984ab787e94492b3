pub mod oxide;
