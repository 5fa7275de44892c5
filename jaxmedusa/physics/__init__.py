"""Physics of one vehicle, with no batch axis: chassis and suspension (vehicle.py, eqs
1.1-1.34), driver inputs (driver.py), the spline road (road.py, eqs 1.35-1.36) and tire
models (tire/: CALSPAN, Fiala; registry TIRES). solver/step.py lifts these with vmap.
"""
from jaxmedusa.physics.driver import driver_inputs, table_value
from jaxmedusa.physics.road import RoadParams, build_road, initial_tracking, road_frame
from jaxmedusa.physics.vehicle import Rates, WheelInfo, energy_medusa, energy_total, vehicle_rates

__all__ = ["driver_inputs", "table_value", "RoadParams", "build_road", "initial_tracking", "road_frame", "Rates",
           "WheelInfo", "energy_medusa", "energy_total", "vehicle_rates"]
