"""Files in and out: MEDUSA's input files (medusa_files.py), TOML scenarios
(scenario_toml.py), input validation with errors naming file and key (validation.py), and
Parquet tables of trajectories and study rows (tables.py)."""
from jaxmedusa.io.medusa_files import MedusaInputError, read_medusa_folder, read_models, read_platoon, read_road
from jaxmedusa.io.scenario_toml import driver_table, load_scenario, scenario_from_dict
from jaxmedusa.io.tables import scenarios_table, trajectory_table, write_table, write_trajectory

__all__ = ["MedusaInputError", "read_medusa_folder", "read_models", "read_platoon", "read_road", "driver_table",
           "load_scenario", "scenario_from_dict", "scenarios_table", "trajectory_table", "write_table",
           "write_trajectory"]
